/* Threads of a parallel loop each offload a kernel that maps the same read-only array b: the first
 * one to arrive allocates and copies it in, the others find it present, the last one releases it.
 * The runtime's reference count orders all that: no race. */
#include <stdio.h>
#define N 4096
#define T 4
int main(void) {
  double b[N], out[T * 64];
  for (int i = 0; i < N; i++) b[i] = i;
#pragma omp parallel for num_threads(2)
  for (int t = 0; t < T; t++) {
#pragma omp target map(to: b[0:N]) map(from: out[t * 64:64])
    for (int i = 0; i < 64; i++) {
      double s = 0;
      for (int k = 0; k < N; k++) s += b[k] * (i + t);
      out[t * 64 + i] = s;
    }
  }
  printf("%f\n", out[70]);
  return 0;
}
