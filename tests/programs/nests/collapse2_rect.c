/* collapse(2) over rectangles whose bounds are known only at run time (OpenMP 5.2 "collapse": the
 * iteration space of the associated loops is the product of their trip counts, linearised in
 * lexical order and divided among the threads by the schedule). Rows start at y0 (not 0), the y
 * loop steps by 3 upwards, the x loop by 2 downwards; each point updates a block of `kb` doubles.
 * The first kernel (`schedule(static, 7)`: chunks that start and end mid-plane) writes the odd
 * columns of `t` only; the second (`schedule(dynamic, 4)`) reads every column of the rectangle,
 * also the even ones nobody wrote (`t` is mapped with alloc). The third kernel's block loop runs no
 * iteration at all (kb0 = 0): a collapsed loop whose rows are empty records nothing. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 29, y0 = argc > 2 ? atoi(argv[2]) : 2, x0 = argc > 3 ? atoi(argv[3]) : 3;
  int kb = argc > 4 ? atoi(argv[4]) : 3, kb0 = argc > 5 ? atoi(argv[5]) : 0;
  int y1 = n - 2, x1 = n / kb - 1; /* rows [y0, y1), columns (x0, x1] */
  size_t total = (size_t)n * n;
  double *s = malloc(total * sizeof(double)), *t = malloc(total * sizeof(double)), *u = malloc(total * sizeof(double));
  for (size_t i = 0; i < total; i++) { s[i] = (double)(i % 17); u[i] = 0.0; }
#pragma omp target data map(to: s[0:total]) map(alloc: t[0:total]) map(tofrom: u[0:total])
  {
#pragma omp target teams distribute parallel for collapse(2) schedule(static, 7)
    for (int y = y0; y < y1; y += 3)
      for (int x = x1; x > x0; x -= 2)
        for (int k = 0; k < kb; k++)
          t[(size_t)y * n + (size_t)x * kb + k] = s[(size_t)y * n + (size_t)x * kb + k] + s[(size_t)(y + 1) * n + (size_t)x * kb + k];
#pragma omp target teams distribute parallel for collapse(2) schedule(dynamic, 4)
    for (int y = y0; y < y1; y += 3)
      for (int x = x1; x > x0; x--)
        for (int k = 0; k < kb; k++)
          u[(size_t)y * n + (size_t)x * kb + k] = 0.5 * t[(size_t)y * n + (size_t)x * kb + k]; /* expect use-of-uninitialized-memory t */
#pragma omp target teams distribute parallel for collapse(2)
    for (int y = y0; y < y1; y++)
      for (int x = x0; x < x1; x++)
        for (int k = 0; k < kb0; k++)
          u[(size_t)y * n + (size_t)x * kb + k] += s[(size_t)y * n + k];
  }
  double sum = 0;
  for (int y = y0; y < y1; y += 3)
    for (int x = x1; x > x0; x -= 2)
      for (int k = 0; k < kb; k++) sum += u[(size_t)y * n + (size_t)x * kb + k]; /* (the columns written from t) */
  printf("%.3f\n", sum);
  free(s); free(t); free(u);
  return 0;
}
