/* A `target update` with `depend` and no `nowait` waits for the kernel it depends on (an undeferred
   target task); a later `nowait` kernel without `depend` races with the update after it. The update's
   dependences made `trace analyze` fail with an internal error (two key spaces of tasks). */
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int n = 1024;
  double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) { a[i] = i; b[i] = 0; }
#pragma omp target enter data map(to: a[0:n]) map(alloc: b[0:n])
#pragma omp target teams distribute parallel for nowait depend(out: b[0])
  for (int i = 0; i < n; i++) b[i] = 2 * a[i];
#pragma omp target update from(b[0:n]) depend(in: b[0])
  printf("%f\n", b[7]);
#pragma omp target teams distribute parallel for nowait
  for (int i = 0; i < n; i++) b[i] += 1;
#pragma omp target update from(b[0:n])
#pragma omp taskwait
  printf("%f\n", b[9]);
#pragma omp target exit data map(delete: a[0:n], b[0:n])
  free(a); free(b);
  return 0;
}
