// C++ SPH-like density: std::vector storage, a struct of arrays, every pair but the particle itself
// (`if (j == i) continue;`) with a smoothing kernel cut off at h.
#include <cstdio>
#include <cstdlib>
#include <vector>
struct Particles {
  std::vector<float> x, y, rho;
  explicit Particles(int n) : x(n), y(n), rho(n) {}
};
int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 3000, steps = argc > 2 ? std::atoi(argv[2]) : 3;
  Particles p(n);
  for (int i = 0; i < n; i++) p.x[i] = (i % 64) * 0.1f, p.y[i] = (i / 64) * 0.1f;
  float *x = p.x.data(), *y = p.y.data(), *rho = p.rho.data();
  const float h2 = 0.09f;
#pragma omp target data map(to: x[0:n], y[0:n]) map(from: rho[0:n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams loop
    for (int i = 0; i < n; i++) {
      float r = 0;
      for (int j = 0; j < n; j++) {
        if (j == i) continue;
        float dx = x[j] - x[i], dy = y[j] - y[i], d2 = dx * dx + dy * dy;
        float w = h2 - d2;
        r += w > 0 ? w * w * w : 0.0f;
      }
      rho[i] = r;
    }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += p.rho[i];
  std::printf("sph %.4f\n", sum);
  return 0;
}
