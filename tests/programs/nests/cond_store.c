/* A conditional store (`if (in[i] > t) out[i] = ...`) stays per access (not on every iteration), and
 * alias analysis cannot tell `out` from `in` (two double pointers): the loads of `in` went per access
 * with it. The store's address is affine, so its hull over the loop is known: a run-time check that it
 * misses the loads' range keeps them one range each. `in` is mapped `to` one element short: the last
 * element's read is outside its section. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  double *in = malloc(sizeof(double) * n), *out = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) { in[i] = (i * 37 % 11) * 0.1; out[i] = -1.0; }
#pragma omp target data map(to: in[0:n - 1]) map(tofrom: out[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      if (in[i] > 0.45) /* expect buffer-overflow in */
        out[i] = in[i] * 2.0 - 1.0;
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += out[i];
  printf("%.3f\n", s);
  free(in); free(out);
  return 0;
}
