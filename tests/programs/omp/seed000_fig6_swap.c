/* seed 000 Fig. 6 (503.postencil): pointers swapped inside a target data region. */
#include <stdio.h>
#include <stdlib.h>
static void stencil(float *A0, float *Anext, int n) {
#pragma omp target teams distribute parallel for map(to: A0[0:n]) map(tofrom: Anext[0:n])
  for (int i = 1; i < n - 1; i++)
    Anext[i] = 0.5f * A0[i] + 0.25f * (A0[i - 1] + A0[i + 1]);
}
int main(void) {
  int n = 32, iterations = 3;
  float *h_A0 = malloc(n * sizeof(float));
  float *h_Anext = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) h_A0[i] = h_Anext[i] = (float)i;
#pragma omp target data map(to: h_A0[0:n]) map(tofrom: h_Anext[0:n])
  {
    for (int t = 0; t < iterations; t++) {
      stencil(h_A0, h_Anext, n);
      float *temp = h_A0;
      h_A0 = h_Anext;
      h_Anext = temp;
    }
  }
  printf("%g\n", h_Anext[5]); /* line 23: after 3 swaps h_Anext is the to-only copy: stale */
  free(h_A0);
  free(h_Anext);
  return 0;
}
