// 3-D 7-point heat step on a non-cubic grid, collapse(3) over the interior, enter/exit data (unseen shape)
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 130, ny = argc > 2 ? atoi(argv[2]) : 70, nz = argc > 3 ? atoi(argv[3]) : 40;
  int steps = argc > 4 ? atoi(argv[4]) : 20;
  size_t n = (size_t)nx * ny * nz;
  float *t = malloc(n * sizeof(float)), *t2 = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) t[i] = t2[i] = (float)(i % 17);
  #pragma omp target enter data map(to: t[0:n], t2[0:n])
  for (int s = 0; s < steps; s++) {
    #pragma omp target teams distribute parallel for collapse(3)
    for (int z = 1; z < nz - 1; z++)
      for (int y = 1; y < ny - 1; y++)
        for (int x = 1; x < nx - 1; x++) {
          size_t c = ((size_t)z * ny + y) * nx + x;
          t2[c] = t[c] + 0.1f * (t[c - 1] + t[c + 1] + t[c - nx] + t[c + nx] + t[c - (size_t)nx * ny] +
                                 t[c + (size_t)nx * ny] - 6.0f * t[c]);
        }
    float *tmp = t; t = t2; t2 = tmp;
  }
  #pragma omp target exit data map(from: t[0:n]) map(delete: t2[0:n])
  printf("heat3d %.4f\n", t[n / 2]);
  free(t); free(t2);
  return 0;
}
