// Blocked inclusive prefix sum: each block of B elements scanned in place by one thread (a recurrence
// s[k] = s[k-1] + a[k] inside the block), then the block totals added in a second pass.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 22, iters = argc > 2 ? atoi(argv[2]) : 10, B = 1024;
  int nb = n / B;
  double *a = malloc(sizeof(double) * n), *s = malloc(sizeof(double) * n), *tot = malloc(sizeof(double) * nb);
  for (int k = 0; k < n; k++) a[k] = (k % 5) * 0.5;
#pragma omp target data map(to: a[0:n]) map(from: s[0:n]) map(alloc: tot[0:nb])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int b = 0; b < nb; b++) {
      s[b * B] = a[b * B];
      for (int i = 1; i < B; i++) s[b * B + i] = s[b * B + i - 1] + a[b * B + i];
      tot[b] = s[b * B + B - 1];
    }
#pragma omp target
    for (int b = 1; b < nb; b++) tot[b] += tot[b - 1];
#pragma omp target teams distribute parallel for
    for (int k = B; k < nb * B; k++) s[k] += tot[k / B - 1];
  }
  double sum = 0;
  for (int k = 0; k < n; k += 4099) sum += s[k];
  printf("blockscan %.3f\n", sum);
  return 0;
}
