// C++: separable 1-D convolutions (horizontal then vertical) over std::vector images on the device
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int w = argc > 1 ? atoi(argv[1]) : 1200, h = argc > 2 ? atoi(argv[2]) : 900, iters = argc > 3 ? atoi(argv[3]) : 20;
  std::vector<float> img(size_t(w) * h), tmp(size_t(w) * h, 0.f);
  for (size_t i = 0; i < img.size(); i++) img[i] = float((i * 7) % 31);
  float *pi = img.data(), *pt = tmp.data();
  const float k0 = 0.4f, k1 = 0.2f, k2 = 0.1f;
  size_t n = img.size();
#pragma omp target data map(tofrom: pi[0:n]) map(alloc: pt[0:n])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for
    for (int y = 0; y < h; y++)
      for (int x = 2; x < w - 2; x++)
        pt[size_t(y) * w + x] = k0 * pi[size_t(y) * w + x] + k1 * (pi[size_t(y) * w + x - 1] + pi[size_t(y) * w + x + 1]) + k2 * (pi[size_t(y) * w + x - 2] + pi[size_t(y) * w + x + 2]);
#pragma omp target teams distribute parallel for
    for (int y = 2; y < h - 2; y++)
      for (int x = 2; x < w - 2; x++)
        pi[size_t(y) * w + x] = k0 * pt[size_t(y) * w + x] + k1 * (pt[size_t(y - 1) * w + x] + pt[size_t(y + 1) * w + x]) + k2 * (pt[size_t(y - 2) * w + x] + pt[size_t(y + 2) * w + x]);
  }
  std::printf("conv %.4f\n", pi[size_t(h / 2) * w + w / 2]);
  return 0;
}
