/* Correct: a struct with a pointer member, the pointee mapped and attached (PTR_AND_OBJ). */
#include <stdio.h>
#include <stdlib.h>
#define N 32
typedef struct { int n; double *data; } vec_t;
int main(void) {
  vec_t v = {N, malloc(N * sizeof(double))};
  for (int i = 0; i < N; i++) v.data[i] = i;
#pragma omp target map(to: v) map(tofrom: v.data[0:N])
  for (int i = 0; i < v.n; i++) v.data[i] *= 2;
  double s = 0;
  for (int i = 0; i < N; i++) s += v.data[i];
  printf("%g\n", s);
  free(v.data);
  return 0;
}
