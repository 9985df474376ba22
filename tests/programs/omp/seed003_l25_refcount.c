#include <stdio.h>
#define N 100
int A[N], sum = 0;
int main(void) {
#pragma omp target data map(from: A[0:N])
  {
#pragma omp target map(from: A[0:N])
    for (int i = 0; i < N; i++)
      A[i] = i;
    for (int i = 0; i < N; i++)
      sum += A[i]; /* line 11: A was not copied back yet */
  }
  printf("%d\n", sum);
  return 0;
}
