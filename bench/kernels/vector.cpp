// A C++ program: std::vector storage mapped through data(), a triad and a reduction per iteration.
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4000000;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 20;
  std::vector<double> xs(n, 1.0), ys(n, 2.0), zs(n, 0.0);
  double *x = xs.data(), *y = ys.data(), *z = zs.data();
  double total = 0.0;
#pragma omp target data map(to: x[0:n], y[0:n]) map(tofrom: z[0:n])
  for (int it = 0; it < iters; it++) {
    const double s = 0.5 + it * 1e-3;
#pragma omp target teams distribute parallel for
    for (std::size_t i = 0; i < n; i++) z[i] = x[i] + s * y[i];
    double r = 0.0;
#pragma omp target teams distribute parallel for reduction(+: r)
    for (std::size_t i = 0; i < n; i++) r += z[i];
    total += r;
  }
  std::printf("vector total %.3f\n", total);
  return 0;
}
