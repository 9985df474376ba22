// C++ 5x5 box filter on a float image with std::clamp'ed indices, collapse(2) over the pixels.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int w = argc > 1 ? std::atoi(argv[1]) : 1024, h = w, iters = argc > 2 ? std::atoi(argv[2]) : 4;
  std::vector<float> in(static_cast<size_t>(w) * h), out(in.size());
  for (size_t k = 0; k < in.size(); k++) in[k] = static_cast<float>(k % 13);
  float *a = in.data(), *b = out.data();
#pragma omp target data map(tofrom: a[0:w*h]) map(alloc: b[0:w*h])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for collapse(2)
    for (int yy = 0; yy < h; yy++)
      for (int xx = 0; xx < w; xx++) {
        float s = 0;
        for (int dy = -2; dy <= 2; dy++)
          for (int dx = -2; dx <= 2; dx++) s += a[std::clamp(yy + dy, 0, h - 1) * w + std::clamp(xx + dx, 0, w - 1)];
        b[yy * w + xx] = s / 25;
      }
#pragma omp target teams distribute parallel for
    for (int k = 0; k < w * h; k++) a[k] = b[k];
  }
  double sum = 0;
  for (float v : in) sum += v;
  std::printf("clampcpp %.3f\n", sum);
  return 0;
}
