// C++ check (written after the session's changes): a velocity field damped only where a sponge mask is set,
// through std::vector storage, `target teams loop`; the energy per cell is mapped alloc, computed only where
// the mask holds, and copied back with `target update from` (its other cells come back uninitialised).
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 100000, steps = argc > 2 ? std::atoi(argv[2]) : 10;
  std::vector<double> u(n), w(n), e(n, 0.0);
  std::vector<int> sponge(n);
  for (int i = 0; i < n; i++) { u[i] = (i % 17) * 0.1; w[i] = (i % 5) * 0.2; sponge[i] = (i / 64) % 3 == 0; }
  double *U = u.data(), *W = w.data(), *E = e.data();
  int *S = sponge.data();
#pragma omp target data map(tofrom: U[0:n], W[0:n]) map(to: S[0:n]) map(alloc: E[0:n])
  {
    for (int s = 0; s < steps; s++) {
#pragma omp target teams loop
      for (int i = 0; i < n; i++)
        if (S[i]) {
          U[i] = 0.9 * U[i] - 0.05 * W[i];
          W[i] = 0.9 * W[i] + 0.05 * U[i];
          E[i] = U[i] * U[i] + W[i] * W[i];
        }
    }
#pragma omp target update from(E[0:n])
  }
  double total = 0;
  for (int i = 0; i < n; i++) total += E[i];
  std::printf("energy %.4f\n", total);
  return 0;
}
