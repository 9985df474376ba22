// Device first-order upwind advection over std::vector storage: the flux of each face takes the
// left or the right cell by the sign of the velocity (two conditional stores, one per branch, into
// the same array), then cells whose value crossed a limit are flagged (a conditional store into a
// byte array) and the update reads the flux only on flagged-free cells (a conditional read).
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000000, steps = argc > 2 ? std::atoi(argv[2]) : 30;
  std::vector<double> q(n), u(n + 1), flux(n + 1, 0.0);
  std::vector<unsigned char> flag(n, 0);
  for (int i = 0; i < n; i++) q[i] = (i % 97) * 0.01;
  for (int i = 0; i <= n; i++) u[i] = ((i * 7919) % 13) - 6.0;
  double *Q = q.data(), *U = u.data(), *F = flux.data();
  unsigned char *G = flag.data();
#pragma omp target data map(tofrom: Q[0:n]) map(to: U[0:n + 1]) map(alloc: F[0:n + 1]) map(tofrom: G[0:n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n; i++) {
      if (U[i] > 0) F[i] = U[i] * Q[i - 1];
      else if (U[i] < 0) F[i] = U[i] * Q[i];
      else F[i] = 0.0;
    }
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      if (Q[i] > 0.9) G[i] = 1;
#pragma omp target teams distribute parallel for
    for (int i = 1; i < n - 1; i++)
      if (!G[i]) Q[i] -= 0.001 * (F[i + 1] - F[i]);
  }
  double sum = 0;
  int flagged = 0;
  for (int i = 0; i < n; i++) sum += q[i], flagged += flag[i];
  std::printf("upwind %.4f %d\n", sum, flagged);
  return 0;
}
