// C++ row-wise 1-D Laplacian smoothing over std::vector<double>::data(), rows of varying offset (unseen shape)
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int rows = argc > 1 ? std::atoi(argv[1]) : 3000, cols = argc > 2 ? std::atoi(argv[2]) : 700;
  int sweeps = argc > 3 ? std::atoi(argv[3]) : 10;
  std::vector<double> a(static_cast<size_t>(rows) * cols), b(a.size());
  for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<double>(i % 101) / 7.0;
  double *pa = a.data(), *pb = b.data();
  size_t n = a.size();
#pragma omp target data map(tofrom: pa[0:n]) map(alloc: pb[0:n])
  for (int s = 0; s < sweeps; s++) {
#pragma omp target teams distribute parallel for
    for (int r = 0; r < rows; r++) {
      const double *src = pa + static_cast<size_t>(r) * cols;
      double *dst = pb + static_cast<size_t>(r) * cols;
      dst[0] = src[0];
      for (int c = 1; c < cols - 1; c++) dst[c] = 0.5 * src[c] + 0.25 * (src[c - 1] + src[c + 1]);
      dst[cols - 1] = src[cols - 1];
    }
    std::swap(pa, pb);
  }
  // the last sweep's result is in pa's device copy only when sweeps is even: copy it back explicitly
#pragma omp target update from(pa[0:n])
  std::printf("lap_rows %.4f\n", pa[n / 2]);
  return 0;
}
