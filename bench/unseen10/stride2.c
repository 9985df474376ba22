// Complex numbers stored interleaved (re, im) in one float array: a pointwise complex multiply-add,
// each element two loads and two stores 4 bytes apart, a pair every 8 bytes.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 21, steps = argc > 2 ? atoi(argv[2]) : 30;
  float *z = malloc(sizeof(float) * 2 * n), *w = malloc(sizeof(float) * 2 * n);
  for (int i = 0; i < 2 * n; i++) { z[i] = (i % 9) * 0.1f; w[i] = (i % 5) * 0.2f; }
#pragma omp target data map(tofrom: z[0:2*n]) map(to: w[0:2*n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      float re = z[2 * i], im = z[2 * i + 1], wr = w[2 * i], wi = w[2 * i + 1];
      z[2 * i] = 0.5f * (re * wr - im * wi) + re;
      z[2 * i + 1] = 0.5f * (re * wi + im * wr) + im;
    }
  }
  double sum = 0;
  for (int i = 0; i < 2 * n; i++) sum += z[i];
  printf("stride2 %.3f\n", sum);
  return 0;
}
