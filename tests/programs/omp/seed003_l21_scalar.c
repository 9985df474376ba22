#include <stdio.h>
#define N 100
int main(void) {
  int A[N], sum = 0, i;
  for (i = 0; i < N; i++) A[i] = 1;
#pragma omp target
#pragma omp teams distribute parallel for reduction(+:sum)
  for (i = 0; i < N; i++)
    sum += A[i];
  printf("%d\n", sum); /* line 10: prints 0, sum was firstprivate */
  return 0;
}
