// Device diffusion of a tracer over an ocean grid with a land mask: only ocean cells are updated and
// read their neighbours (a 5-point stencil under `if (ocean[i][j])`, about 70% of the cells, in
// coastlines rather than at random), with the two grids swapped each step (written as a check on
// shapes nobody tuned for: a conditional stencil).
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 1024, ny = argc > 2 ? atoi(argv[2]) : 1024, steps = argc > 3 ? atoi(argv[3]) : 20;
  size_t n = (size_t)nx * ny;
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
  unsigned char *ocean = malloc(n);
  for (int i = 0; i < ny; i++)
    for (int j = 0; j < nx; j++) {
      size_t k = (size_t)i * nx + j;
      int coast = (j * 7 + i * 3) % 97 + (i % 31) * 2;   // bands of land
      ocean[k] = i > 0 && j > 0 && i < ny - 1 && j < nx - 1 && coast > 30;
      a[k] = b[k] = (float)((i * 13 + j * 7) % 100) * 0.01f;
    }
  float kappa = 0.1f;
#pragma omp target data map(tofrom: a[0:n], b[0:n]) map(to: ocean[0:n])
  for (int s = 0; s < steps; s++) {
    float *src = s % 2 ? b : a, *dst = s % 2 ? a : b;
#pragma omp target teams distribute parallel for
    for (int i = 1; i < ny - 1; i++)
      for (int j = 1; j < nx - 1; j++) {
        size_t k = (size_t)i * nx + j;
        if (ocean[k])
          dst[k] = src[k] + kappa * (src[k - 1] + src[k + 1] + src[k - nx] + src[k + nx] - 4.0f * src[k]);
      }
  }
  double sum = 0;
  for (size_t k = 0; k < n; k++) sum += a[k];
  printf("landsea %.4f\n", sum);
  free(a); free(b); free(ocean);
  return 0;
}
