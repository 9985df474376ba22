// Particles with a liveness flag: only live particles move (conditional read-modify-write of x and v,
// four conditional streams at ~67% density), dead ones are skipped; a `target teams loop` construct over
// struct-of-arrays std::vector storage. (Written after the masked runs, as a check on a shape they were
// not tuned for: docs/bench.md "Conditional accesses: masked runs".)
#include <cstdio>
#include <cstdlib>
#include <vector>
struct Soa { std::vector<float> x, v; std::vector<unsigned char> alive; };
int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 500000, steps = argc > 2 ? std::atoi(argv[2]) : 20;
  Soa p{std::vector<float>(n), std::vector<float>(n), std::vector<unsigned char>(n)};
  for (int i = 0; i < n; i++) {
    p.x[i] = i * 0.001f;
    p.v[i] = (i % 7) * 0.1f;
    p.alive[i] = (i * 2654435761u >> 9) % 3 != 0;
  }
  float *x = p.x.data(), *v = p.v.data();
  unsigned char *alive = p.alive.data();
#pragma omp target data map(tofrom: x[0:n], v[0:n]) map(to: alive[0:n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams loop
    for (int i = 0; i < n; i++)
      if (alive[i]) {
        v[i] = v[i] * 0.99f - 0.01f * x[i];
        x[i] += v[i] * 0.1f;
      }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += x[i];
  std::printf("particles %.3f\n", sum);
  return 0;
}
