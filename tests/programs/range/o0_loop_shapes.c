/* Loop shapes an -O0 build meets, each in its own kernel: the pass analyses a promoted copy of the
 * function and hoists only what it proves (a 2D sweep with halo, a pointer walk), never a loop
 * whose bound moves, that breaks early, or that calls code writing the array. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void fill(double *w, int i) { w[i] = (double)i; }
#pragma omp declare target(fill)

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40, m = n, none = argc > 2 ? atoi(argv[2]) : 0;
  double *u = malloc((size_t)n * n * sizeof(double)), *v = malloc((size_t)n * n * sizeof(double));
  double *w = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double)), s = 0;
  for (int i = 0; i < n * n; i++) u[i] = i % 5;
  for (int i = 0; i < n; i++) c[i] = i < n / 2 ? 1.0 : -1.0;
#pragma omp target data map(to: u[0:n*n], c[0:n]) map(alloc: v[0:n*n], w[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
#pragma omp target map(tofrom: s, m)
    {
      int lim[1] = {n};
      for (int i = 0; i < lim[0]; i++) { /* the bound moves inside the body */
        w[i] = c[i];
        if (c[i] < 0) lim[0] -= 2;
      }
      m = lim[0];
      for (int i = 0; i < n; i++) { /* leaves early */
        if (c[i] < 0) break;
        s += v[n + i + 1];
      }
      for (double *p = w; p < w + n / 4; p++) *p = *p + 1.0; /* pointer walk */
      for (int i = 0; i < n; i++) { /* the callee writes what the loop reads */
        fill(w, i);
        s += w[i];
      }
      for (int i = 0; i < n; i++) s += v[i]; /* expect use-of-uninitialized-memory v */
      for (int i = 0; i < none; i++) w[i] = 0.0; /* never runs: no bytes */
    }
  }
  printf("%.1f %d\n", s, m);
  free(u); free(v); free(w); free(c);
  return 0;
}
