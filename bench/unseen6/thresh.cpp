// Device thresholding over std::vector<float>: an output element is written only where the input
// plus a ring-buffer term (`r[i % w]`, the index wraps) passes a level; the output is mapped `alloc`
// and copied back with `target update from` after the last kernel (its skipped elements were never
// written on the device: a real use of uninitialised memory the analysis reports).
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 200000, reps = argc > 2 ? std::atoi(argv[2]) : 20, w = 61;
  std::vector<float> in(n), ring(w), out(n, 0.0f);
  for (int i = 0; i < n; i++) in[i] = ((i * 7919) % 1000) / 1000.0f;
  for (int k = 0; k < w; k++) ring[k] = (k % 5) * 0.05f;
  float *I = in.data(), *R = ring.data(), *O = out.data();
#pragma omp target data map(to: I[0:n], R[0:w]) map(alloc: O[0:n])
  {
    for (int r = 0; r < reps; r++) {
#pragma omp target teams distribute parallel for
      for (int i = 0; i < n; i++)
        if (I[i] + R[i % w] > 0.9f) O[i] = I[i] * (1.0f + 0.001f * r);
    }
#pragma omp target update from(O[0:n])
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += out[i];
  std::printf("thresh %.3f\n", s);
  return 0;
}
