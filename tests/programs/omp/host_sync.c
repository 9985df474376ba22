/* Every OpenMP host-thread synchronisation the tracer records (FORMAT.md, SYNC): fork and join,
 * explicit barrier, critical, locks, ordered, single, sections, for, master, flush. */
#include <omp.h>
#include <stdio.h>
int main(void) {
  int sum = 0, seq = 0, x = 0;
  omp_lock_t lock;
  omp_init_lock(&lock);
#pragma omp parallel num_threads(2)
  {
#pragma omp critical
    sum += 1;
    omp_set_lock(&lock);
    sum += 1;
    omp_unset_lock(&lock);
#pragma omp barrier
#pragma omp for ordered
    for (int i = 0; i < 4; i++) {
#pragma omp ordered
      seq += i;
    }
#pragma omp single
    x = 1;
#pragma omp sections
    {
#pragma omp section
      sum += 0;
#pragma omp section
      sum += 0;
    }
#pragma omp master
    x += 1;
#pragma omp flush
  }
  omp_destroy_lock(&lock);
  printf("%d %d %d\n", sum, seq, x);
  return 0;
}
