// Boundary branches in a 1D loop over std::vector storage: first, last and interior cells take three
// different formulas, all storing into the same output (an explicit diffusion step).
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1 << 21, steps = argc > 2 ? std::atoi(argv[2]) : 40;
  std::vector<double> A(n), B(n);
  for (int i = 0; i < n; i++) A[i] = (i % 13) * 0.5;
  double *a = A.data(), *b = B.data();
#pragma omp target data map(tofrom: a[0:n]) map(alloc: b[0:n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      if (i == 0) b[i] = a[i] + 0.1 * (a[i + 1] - a[i]);
      else if (i == n - 1) b[i] = a[i] + 0.1 * (a[i - 1] - a[i]);
      else b[i] = a[i] + 0.1 * (a[i - 1] - 2 * a[i] + a[i + 1]);
    }
    double *t = a; a = b; b = t;
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += a[i];
  std::printf("bc1d %.6f\n", sum);
  return 0;
}
