// Wet/dry cells of a shallow-water step (written after the masked-run changes of 2026-11-29, seventh
// session, as a check on a shape nobody tuned for): only cells whose depth is above a threshold are
// updated, from their four neighbours' depths and their own momentum, over a `collapse(2)` device loop
// on std::vector storage with rows of 700 doubles; the wet region is a disc that shrinks with time, so
// the gaps are long at the edges and absent inside. The momentum array is mapped `alloc` and never
// initialised on the device: the update reads it (a planted bug; the value it reads decides nothing the
// program prints unless the garbage is exactly 1234.5).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int nx = argc > 1 ? std::atoi(argv[1]) : 700, ny = argc > 2 ? std::atoi(argv[2]) : 700, steps = argc > 3 ? std::atoi(argv[3]) : 20;
  size_t n = (size_t)nx * ny;
  std::vector<double> h(n), hn(n), m(n);
  for (int i = 0; i < ny; i++)
    for (int j = 0; j < nx; j++) {
      double x = (j - nx / 2.0) / nx, y = (i - ny / 2.0) / ny, r = std::sqrt(x * x + y * y);
      h[(size_t)i * nx + j] = r < 0.4 ? 0.4 - r + 0.001 * ((i * 31 + j * 17) % 7) : 0.0;
    }
  double *H = h.data(), *HN = hn.data(), *M = m.data();
#pragma omp target data map(tofrom: H[0:n]) map(from: HN[0:n]) map(alloc: M[0:n])
  for (int s = 0; s < steps; s++) {
    double dry = 0.01 + 0.004 * s;
#pragma omp target teams distribute parallel for collapse(2)
    for (int i = 1; i < ny - 1; i++)
      for (int j = 1; j < nx - 1; j++) {
        size_t k = (size_t)i * nx + j;
        if (H[k] > dry)
          HN[k] = H[k] + 0.05 * (H[k - 1] + H[k + 1] + H[k - nx] + H[k + nx] - 4.0 * H[k]) + (M[k] == 1234.5 ? 1e-9 : 0.0);
        else
          HN[k] = H[k];
      }
#pragma omp target teams distribute parallel for
    for (size_t k = 0; k < n; k++) H[k] = HN[k];
  }
  double vol = 0;
  for (size_t k = 0; k < n; k++) vol += h[k];
  std::printf("wetdry %.6f\n", vol);
  return 0;
}
