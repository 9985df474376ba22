/* Correct: a worker thread of a parallel region launches ordered nowait work on data the initial
 * thread wrote before the region (ordered by the fork), and the initial thread reads after the
 * region (ordered by its closing barrier). */
#include <omp.h>
#include <stdio.h>
#define N 1000
int main(void) {
  int a[N], b[N];
#pragma omp target enter data map(alloc: a[0:N], b[0:N])
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) {
#pragma omp target update to(a[0:N]) nowait depend(out: a)
#pragma omp target nowait depend(in: a) depend(out: b)
      for (int i = 0; i < N; i++) b[i] = 2 * a[i];
#pragma omp target update from(b[0:N]) nowait depend(in: b)
#pragma omp taskwait
    }
  }
  printf("%d\n", b[N - 1]);
#pragma omp target exit data map(release: a[0:N], b[0:N])
  return 0;
}
