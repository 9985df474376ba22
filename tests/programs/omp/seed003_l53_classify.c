/* OmpSan Listing 5.3; the listing's map(from: B) on enter data is alloc in OpenMP 5 (Table 4 says Alloc). */
#include <stdio.h>
#define N 10
int main() {
  int A[10], B[10], C[N];
  for (int i = 0; i < 10; i++)
    A[i] = i;

#pragma omp target enter data map(to: A[0:10]) map(alloc: B[0:10])
#pragma omp target map(from: B[0:10])
  for (int i = 0; i < 10; i++)
    B[i] = A[i];
#pragma omp target data map(from: B[0:10], C[0:N])
  for (int i = 0; i < 10; i++)
    C[i] = B[i] * i;
#pragma omp target exit data map(from: B[0:10])
  for (int i = 0; i < 10; i++)
    printf("%d", B[i]);
  printf("\n");
  return 0;
}
