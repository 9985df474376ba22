/* A conditional read of a sliding pair (`if (keep[i]) s += f[i] + f[i + 1]`): the two loads are one
 * 16-byte load per element (adjacent bytes of one base), each rereading the 8 bytes the one before read
 * last; and a conditional read-modify-write `if (keep[i]) q[i] -= ...` right behind it. `f` is mapped
 * one element short: the last pair's second element is outside its section. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  double *f = malloc(sizeof(double) * (n + 1)), *q = malloc(sizeof(double) * n);
  unsigned char *keep = malloc(n);
  for (int i = 0; i <= n; i++) f[i] = (i % 7) * 0.25;
  for (int i = 0; i < n; i++) {
    q[i] = i * 0.5;
    keep[i] = i == n - 1 || (i * 2654435761u >> 7) % 9 != 0;
  }
#pragma omp target data map(to: f[0:n], keep[0:n]) map(tofrom: q[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      if (keep[i]) q[i] -= 0.1 * (f[i + 1] - f[i]); /* expect buffer-overflow f */
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += q[i];
  printf("%.2f\n", s);
  free(f); free(q); free(keep);
  return 0;
}
