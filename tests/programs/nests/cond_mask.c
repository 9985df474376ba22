/* Conditional accesses with data-dependent gaps (masked runs): a store of doubles on ~70% of the
 * elements, a read of floats on ~80%, a store of bytes on ~10% (long gaps; its condition a call, which
 * -O0 keeps in the loop), each from a hash of the index, in kernels whose threads take chunks that end
 * anywhere inside a 64-element window. `out` is
 * mapped `alloc` and copied back with `target update from`: the elements the store skipped were never
 * initialised on the device, and the host reads them after the copy. */
#include <stdio.h>
#include <stdlib.h>
static unsigned mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x45d9f3bu;
  x ^= x >> 16;
  return x;
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3001;
  double *in = malloc(sizeof(double) * n), *out = malloc(sizeof(double) * n);
  float *f = malloc(sizeof(float) * n);
  unsigned char *keep = malloc(n), *flag = malloc(n);
  for (int i = 0; i < n; i++) {
    in[i] = (mix(i) % 1000) / 1000.0;
    f[i] = i * 0.5f;
    keep[i] = mix(7 * i + 1) % 5 != 0;
    flag[i] = 0;
  }
  double sum = 0;
#pragma omp target data map(to: in[0:n], f[0:n], keep[0:n]) map(alloc: out[0:n]) map(tofrom: flag[0:n], sum)
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      if (in[i] > 0.3) out[i] = in[i] * 2.0;
#pragma omp target teams distribute parallel for reduction(+: sum)
    for (int i = 0; i < n; i++)
      if (keep[i]) sum += f[i];
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      if (mix(i) % 10 == 0) flag[i] = 1; /* (a call in the loop at -O0) */
#pragma omp target update from(out[0:n])
  }
  double s = 0;
  int set = 0;
  for (int i = 0; i < n; i++) {
    s += out[i]; /* expect use-of-uninitialized-memory out */
    set += flag[i];
  }
  printf("%.1f %d%s\n", sum, set, s == 0.125 ? " !" : ""); /* (s depends on what the gaps held) */
  free(in); free(out); free(f); free(keep); free(flag);
  return 0;
}
