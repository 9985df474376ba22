/* Red-black SOR on a tall grid of odd width: a colour's points of row i start at column
 * 1 + (i + colour + 1) % 2 and step by 2, so every grid row of a colour is a strided run, and the
 * rows i and i + 2 of a colour have one shape at one distance (planes). With an odd width the
 * colour's points of rows i and i + 1 are at the same residue too, 8 bytes apart from a row's end.
 * The clause maps every row but the last: the updates of row ny - 2 read the boundary row below it,
 * which the device copy does not hold (the last plane of those reads). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 37, ny = argc > 2 ? atoi(argv[2]) : 300;
  int sweeps = argc > 3 ? atoi(argv[3]) : 2;
  double omega = 1.5;
  double *u = malloc(sizeof(double) * nx * ny), *rhs = malloc(sizeof(double) * nx * ny);
  for (int k = 0; k < nx * ny; k++) {
    u[k] = 0.0;
    rhs[k] = (k % 7) * 0.125;
  }
#pragma omp target data map(tofrom: u[0:nx * (ny - 1)]) map(to: rhs[0:nx * ny])
  for (int s = 0; s < sweeps; s++)
    for (int colour = 0; colour < 2; colour++) {
#pragma omp target teams distribute parallel for
      for (int i = 1; i < ny - 1; i++)
        for (int j = 1 + (i + colour + 1) % 2; j < nx - 1; j += 2) {
          double gs = 0.25 * (u[(i - 1) * nx + j] + u[(i + 1) * nx + j] + u[i * nx + j - 1] + u[i * nx + j + 1] - rhs[i * nx + j]); /* expect buffer-overflow u */
          u[i * nx + j] += omega * (gs - u[i * nx + j]);
        }
    }
  printf("%.6f\n", u[(ny / 2) * nx + nx / 2]);
  free(u);
  free(rhs);
  return 0;
}
