/* Each round allocates a work array (the allocator hands back the same address every time), maps
 * it, fills it on the host through the same store instruction, sends it and reads it on the
 * device, then unmaps and frees it. The run the store's call site appended to in one round must
 * not carry over into the next allocation. The last round sends one element too few. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1500, rounds = 3;
  double s = 0.0;
  for (int r = 0; r < rounds; r++) {
    double *w = malloc(n * sizeof(double));
    int m = r == rounds - 1 ? n - 1 : n;
#pragma omp target enter data map(alloc: w[0:n])
    for (int i = 0; i < n; i++) w[i] = r + 0.001 * i;
#pragma omp target update to(w[0:m])
#pragma omp target teams distribute parallel for map(tofrom: s) reduction(+: s)
    for (int i = 0; i < n; i++)
      s += w[i]; /* expect use-of-uninitialized-memory w */
#pragma omp target exit data map(delete: w[0:n])
    free(w);
  }
  printf("%.1f\n", s);
  return 0;
}
