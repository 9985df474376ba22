// A kernel reads a C++ new[] array that no map clause covers: only the result is mapped.
#include <cstdio>
int main() {
  const int n = 1000;
  double *w = new double[n];
  double *b = new double[n];
  for (int i = 0; i < n; i++) w[i] = i;
#pragma omp target map(from: b[0:n])
  for (int i = 0; i < n; i++) b[i] = 2.0 * w[i]; /* expect unmapped-memory w */
  std::printf("%f\n", b[3]);
  delete[] w;
  delete[] b;
  return 0;
}
