/* Two sibling tasks: one offloads a kernel that writes x, the other reads x on the device copy through
 * `target update from` - nothing orders the tasks. */
#include <stdio.h>
#define N 1000
int main(void) {
  int x[N];
  for (int i = 0; i < N; i++) x[i] = 0;
#pragma omp target data map(tofrom: x[0:N])
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task shared(x)
    {
#pragma omp target
      for (int i = 0; i < N; i++) x[i] = i * i; /* expect data-race x */
    }
#pragma omp task shared(x)
    {
#pragma omp target update from(x[0:N]) /* expect data-race x */
    }
  }
  printf("%d\n", x[9]);
  return 0;
}
