// C++ points as std::vector<std::array<double, 3>> (fields by index, stride 24) on the device:
// a windowed neighbour sum with bounds std::max(0, i - K) .. std::min(n, i + K + 1), an inner loop
// over the 3 components, and a `simd` update of velocities held as std::array<float, 4>.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200000, iters = argc > 2 ? atoi(argv[2]) : 20;
  const int K = 8;
  std::vector<std::array<double, 3>> pos(n), frc(n);
  std::vector<std::array<float, 4>> vel(n);
  for (int i = 0; i < n; i++) {
    pos[i] = {i * 0.01, (i % 7) * 0.1, (i % 11) * 0.05};
    frc[i] = {0, 0, 0};
    vel[i] = {0.f, 0.f, 0.f, 1.f};
  }
  std::array<double, 3> *P = pos.data(), *F = frc.data();
  std::array<float, 4> *V = vel.data();
#pragma omp target data map(tofrom: P[0:n], V[0:n]) map(alloc: F[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      std::array<double, 3> f = {0, 0, 0};
      int lo = std::max(0, i - K), hi = std::min(n, i + K + 1);
      for (int j = lo; j < hi; j++)
        for (int d = 0; d < 3; d++) f[d] += 1e-4 * (P[j][d] - P[i][d]);
      F[i] = f;
    }
#pragma omp target teams distribute parallel for simd
    for (int i = 0; i < n; i++) {
      for (int d = 0; d < 3; d++) {
        V[i][d] += (float)F[i][d];
        P[i][d] += 0.01 * V[i][d];
      }
    }
  }
  std::printf("vecarr %.6e %.6e\n", pos[n / 2][0], (double)vel[n / 3][1]);
  return 0;
}
