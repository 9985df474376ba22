// All-pairs n-body force: every i reads all j (structure of arrays), skips itself with `if (j != i)`,
// accumulates in registers and writes its own acceleration once.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096, iters = argc > 2 ? atoi(argv[2]) : 3;
  float *px = malloc(sizeof(float) * n), *py = malloc(sizeof(float) * n), *pz = malloc(sizeof(float) * n);
  float *ax = malloc(sizeof(float) * n), *ay = malloc(sizeof(float) * n), *az = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) px[i] = i % 31, py[i] = i % 17 * 0.5f, pz[i] = i % 13 * 0.25f;
#pragma omp target data map(tofrom: px[0:n], py[0:n], pz[0:n]) map(alloc: ax[0:n], ay[0:n], az[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      float fx = 0, fy = 0, fz = 0;
      for (int j = 0; j < n; j++) {
        if (j != i) {
          float dx = px[j] - px[i], dy = py[j] - py[i], dz = pz[j] - pz[i];
          float r2 = dx * dx + dy * dy + dz * dz + 0.01f;
          float inv = 1.0f / (r2 * sqrtf(r2));
          fx += dx * inv, fy += dy * inv, fz += dz * inv;
        }
      }
      ax[i] = fx, ay[i] = fy, az[i] = fz;
    }
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) px[i] += 1e-4f * ax[i], py[i] += 1e-4f * ay[i], pz[i] += 1e-4f * az[i];
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += px[i] + py[i] + pz[i];
  printf("nbody %.4f\n", sum);
  return 0;
}
