/* parallel + single without nowait: the implicit barrier at the end of the first single orders its
 * kernel before the host write and `target update` of the second, whichever threads run them. */
#include <stdio.h>
#define N 2048
int main(void) {
  float a[N], r[N];
  for (int i = 0; i < N; i++) a[i] = (float)i;
#pragma omp target enter data map(to: a[0:N]) map(alloc: r[0:N])
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    {
#pragma omp target
      for (int i = 0; i < N; i++) r[i] = a[i] + 1.0f;
    }
#pragma omp single
    {
      for (int i = 0; i < N; i++) a[i] = 0.0f;
#pragma omp target update to(a[0:N])
    }
  }
#pragma omp target exit data map(from: r[0:N]) map(delete: a[0:N])
  printf("%f\n", r[7]);
  return 0;
}
