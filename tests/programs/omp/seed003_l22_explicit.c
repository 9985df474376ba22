#include <stdio.h>
#define N 100
int main(void) {
  int A[N], sum = 0;
  for (int i = 0; i < N; i++) A[i] = 1;
#pragma omp target map(tofrom: sum)
#pragma omp teams distribute parallel for reduction(+:sum)
  for (int i = 0; i < N; i++)
    sum += A[i];
  printf("%d\n", sum);
  return 0;
}
