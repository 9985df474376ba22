#include <stdio.h>
int main(void) {
  int A[10], B[10];
  for (int i = 0; i < 10; i++)
    A[i] = i;
#pragma omp target enter data map(to: A[0:10]) map(alloc: B[0:10])
#pragma omp target map(from: B[0:10])
  for (int i = 0; i < 10; i++)
    B[i] = A[i];
#pragma omp target exit data map(from: B[0:10])
  for (int i = 0; i < 10; i++)
    printf("%d", B[i]);
  printf("\n");
  return 0;
}
