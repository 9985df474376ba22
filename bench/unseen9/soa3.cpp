// A struct of three std::vector<double> fields updated by an rk-like axpy chain, the kernel reads the
// vectors through references to the struct's fields (no .data() pointers taken by the programmer).
#include <cstdio>
#include <cstdlib>
#include <vector>
struct State { std::vector<double> q, k1, k2; };
int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1 << 20, steps = argc > 2 ? std::atoi(argv[2]) : 30;
  State s{std::vector<double>(n, 1.0), std::vector<double>(n, 0.5), std::vector<double>(n, 0.0)};
  double *q = s.q.data(), *k1 = s.k1.data(), *k2 = s.k2.data();
#pragma omp target data map(tofrom: q[0:n]) map(to: k1[0:n]) map(alloc: k2[0:n])
  for (int t = 0; t < steps; t++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) k2[i] = q[i] + 0.5 * k1[i];
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++) k1[i] = 0.5 * (k2[i - 1] - k2[i + 1]);
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) q[i] += 0.01 * (k1[i] + k2[i]);
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += q[i];
  std::printf("soa3 %.6f\n", sum);
  return 0;
}
