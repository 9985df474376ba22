/* Two sibling tasks ordered by depend(inout: x): the kernel that writes x finishes before the other task
 * copies x back. */
#include <stdio.h>
#define N 1000
int main(void) {
  int x[N];
  for (int i = 0; i < N; i++) x[i] = 0;
#pragma omp target data map(tofrom: x[0:N])
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task shared(x) depend(inout: x[0:N])
    {
#pragma omp target
      for (int i = 0; i < N; i++) x[i] = i * i;
    }
#pragma omp task shared(x) depend(inout: x[0:N])
    {
#pragma omp target update from(x[0:N])
    }
  }
  printf("%d\n", x[9]);
  return 0;
}
