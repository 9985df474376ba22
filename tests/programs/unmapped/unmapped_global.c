/* A kernel reads a global table through a pointer that is only firstprivate: no clause maps it. */
#include <stdio.h>
#define N 1024
double table[N];
int main(void) {
  double out[N];
  const double *t = table;
  for (int i = 0; i < N; i++) table[i] = 0.5 * i;
#pragma omp target map(from: out[0:N])
  for (int i = 0; i < N; i++) out[i] = t[i] + 1.0; /* expect unmapped-memory table */
  printf("%f\n", out[7]);
  return 0;
}
