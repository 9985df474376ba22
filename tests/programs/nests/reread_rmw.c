/* Conditional updates through pointers the compiler cannot tell apart (no `restrict`): under
 * `if (alive[i])`, `v[i] = ... x[i]` then `x[i] += ... v[i]` reads x[i] a second time after the store to
 * v[i] (which could be x[i]), and `y[i] = v[i] + ...` after the store to x[i] reads v[i] again. Each
 * repeated access is covered by the same thread's earlier one in its block (a read by a read or a
 * store, a read by a store), so `trace cc` gives it no call. `x` is mapped one element short. */
#include <stdio.h>
#include <stdlib.h>
void push(float *x, float *v, float *y, const unsigned char *alive, int n) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++)
    if (alive[i]) {
      v[i] = v[i] * 0.99f - 0.01f * x[i]; /* expect buffer-overflow x */
      x[i] += 0.1f * v[i]; /* expect buffer-overflow x */
      y[i] = v[i] + x[i];
    }
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3000;
  float *x = malloc(sizeof(float) * n), *v = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  unsigned char *alive = malloc(n);
  for (int i = 0; i < n; i++) {
    x[i] = i * 0.001f;
    v[i] = (i % 7) * 0.1f;
    y[i] = 0;
    alive[i] = i == n - 1 || (i * 2654435761u >> 9) % 3 != 0;
  }
#pragma omp target data map(tofrom: x[0:n - 1], v[0:n], y[0:n]) map(to: alive[0:n])
  for (int s = 0; s < 2; s++) push(x, v, y, alive, n);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += y[i];
  printf("%.3f\n", sum);
  free(x); free(v); free(y); free(alive);
  return 0;
}
