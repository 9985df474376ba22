/* Correct: unstructured mapping with nowait and depend on enter, kernel, update and exit. */
#include <stdio.h>
#include <stdlib.h>
#define N 300
int main(void) {
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target enter data map(to: a[0:N]) nowait depend(out: a[0])
#pragma omp target nowait depend(inout: a[0])
  for (int i = 0; i < N; i++) a[i] *= 3;
#pragma omp target update from(a[0:N]) nowait depend(inout: a[0])
#pragma omp target exit data map(release: a[0:N]) nowait depend(inout: a[0])
#pragma omp taskwait
  printf("%d\n", a[N - 1]);
  free(a);
  return 0;
}
