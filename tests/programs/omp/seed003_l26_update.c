#include <stdio.h>
#define N 100
int A[N], sum = 0;
int main(void) {
#pragma omp target data map(from: A[0:N])
  {
#pragma omp target map(from: A[0:N])
    for (int i = 0; i < N; i++)
      A[i] = i;
#pragma omp target update from(A[0:N])
    for (int i = 0; i < N; i++)
      sum += A[i];
  }
  printf("%d\n", sum);
  return 0;
}
