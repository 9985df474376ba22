// A nowait pipeline: chunks flow through two stages chained by depend clauses.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int chunks = argc > 1 ? atoi(argv[1]) : 16, len = argc > 2 ? atoi(argv[2]) : 200000, rounds = argc > 3 ? atoi(argv[3]) : 20;
  float *in = malloc((size_t)chunks * len * sizeof(float)), *out = malloc((size_t)chunks * len * sizeof(float));
  for (size_t i = 0; i < (size_t)chunks * len; i++) { in[i] = (float)(i % 7); out[i] = 0.0f; }
  for (int r = 0; r < rounds; r++) {
    for (int c = 0; c < chunks; c++) {
      float *ci = in + (size_t)c * len, *co = out + (size_t)c * len;
#pragma omp target map(to: ci[0:len]) map(from: co[0:len]) depend(inout: co[0]) nowait
      {
#pragma omp parallel for
        for (int i = 0; i < len; i++) co[i] = ci[i] * 0.5f + 1.0f;
      }
    }
#pragma omp taskwait
  }
  double s = 0;
  for (size_t i = 0; i < (size_t)chunks * len; i++) s += out[i];
  printf("pipeline sum %.1f\n", s);
  free(in); free(out);
  return 0;
}
