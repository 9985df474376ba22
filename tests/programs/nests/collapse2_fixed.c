/* A 5-point Jacobi sweep whose bounds are compile-time constants, with collapse(2): clang's
 * collapsed induction variable is then 32 bits wide (the trip count fits), unlike the 64-bit one of
 * run-time bounds; the range pass's run-time checks are widened to pointer width. `a`'s section
 * leaves out the last row, which the reads of the row below the last interior row reach. */
#include <stdio.h>
#include <stdlib.h>
#define N 34
int main(void) {
  float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N);
  for (int i = 0; i < N * N; i++) a[i] = b[i] = (float)(i % 7);
#pragma omp target data map(to: a[0:N * N - N]) map(tofrom: b[0:N * N])
  for (int t = 0; t < 3; t++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int j = 1; j < N - 1; j++)
      for (int i = 1; i < N - 1; i++)
        b[j * N + i] = 0.25f * (a[j * N + i - 1] + a[j * N + i + 1] + a[(j - 1) * N + i]
                                + a[(j + 1) * N + i]); /* expect buffer-overflow a */
  }
  double s = 0;
  for (int i = N; i < N * N - 2 * N; i++) s += b[i]; /* (the last interior row read past a) */
  printf("%.3f\n", s);
  free(a); free(b);
  return 0;
}
