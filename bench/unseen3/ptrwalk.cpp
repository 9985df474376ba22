// C++ device saxpy-like sweeps written with pointer increments and unsigned/size_t indices over
// std::vector storage: while-loops over [p, end), a reverse loop, and a 2-D view with size_t rows.
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 2000, reps = argc > 2 ? strtoul(argv[2], 0, 10) : 20;
  std::vector<float> xs(n * n, 1.0f), ys(n * n, 2.0f);
  float *x = xs.data(), *y = ys.data();
#pragma omp target data map(to: x[0:n*n]) map(tofrom: y[0:n*n])
  for (size_t r = 0; r < reps; r++) {
#pragma omp target teams distribute parallel for
    for (size_t i = 0; i < n; i++) {
      float *p = y + i * n, *q = x + i * n, *end = p + n;
      while (p < end) *p++ += 0.5f * *q++;
    }
#pragma omp target teams distribute parallel for
    for (size_t i = 0; i < n; i++)
      for (size_t j = n; j-- > 0;) y[i * n + j] -= 0.25f * x[i * n + j];
  }
  printf("ptrwalk %.3f\n", y[n * n / 2]);
  return 0;
}
