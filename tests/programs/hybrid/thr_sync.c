/* MPI_THREAD_MULTIPLE: RMA calls and their completion on different threads, ordered (or not) by
 * OpenMP constructs. Each case uses its own buffer and window element.
 *  - completion on another thread: thread 0 puts c, thread 1 flushes after a barrier, thread 0
 *    reuses c after the next barrier (no race);
 *  - master without a barrier: the master puts d and completes it, thread 1 stores into d (race);
 *  - single (implicit barrier): one thread puts e and completes it, the other reuses e after (no race);
 *  - critical: the put of f and its completion in one critical section, the store into f in another
 *    (no race, whichever thread enters first);
 *  - omp locks: the same with omp_set_lock / omp_unset_lock on g (no race);
 *  - task + taskwait: a task puts h and completes it, its creator stores into h after taskwait (no race);
 *  - for nowait: the iterations put from k[i], a second loop stores into k[i] with another
 *    schedule and no barrier in between (race).
 * ranks: 2  flags: -fopenmp  expect: @B races with @A; @D races with @C */
#include <mpi.h>
#include <omp.h>
int main(int argc, char **argv) {
  int provided, rank, *win_buf, c[1] = {1}, d[1] = {2}, e[1] = {3}, f[1] = {4}, g[1] = {5}, h[1] = {6};
  int k[8] = {0};
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(32 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  omp_lock_t lock;
  omp_init_lock(&lock);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    /* every buffer has been an origin buffer before: the tracer watches it from then on, so the
     * stores below are recorded whenever they happen */
    int *bufs[6] = {c, d, e, f, g, h};
    for (int i = 0; i < 6; i++) MPI_Put(bufs[i], 1, MPI_INT, 1, 16 + i, 1, MPI_INT, win);
    MPI_Put(k, 8, MPI_INT, 1, 24, 8, MPI_INT, win);
    MPI_Win_flush_local_all(win);
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num();
      if (t == 0) MPI_Put(c, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
#pragma omp barrier
      if (t == 1) MPI_Win_flush_local_all(win);
#pragma omp barrier
      if (t == 0) c[0] = 10;
#pragma omp master
      {
        MPI_Put(d, 1, MPI_INT, 1, 1, 1, MPI_INT, win); // @A
        MPI_Win_flush_local(1, win);
      }
      if (t == 1) d[0] = 11;                          // @B
#pragma omp barrier
#pragma omp single
      {
        MPI_Put(e, 1, MPI_INT, 1, 2, 1, MPI_INT, win);
        MPI_Win_flush_local(1, win);
      }
      e[0] = 12 + t;
#pragma omp barrier
#pragma omp critical
      {
        if (t == 0) {
          MPI_Put(f, 1, MPI_INT, 1, 3, 1, MPI_INT, win);
          MPI_Win_flush_local(1, win);
        } else {
          f[0] = 14;
        }
      }
      omp_set_lock(&lock);
      if (t == 1) {
        MPI_Put(g, 1, MPI_INT, 1, 4, 1, MPI_INT, win);
        MPI_Win_flush_local(1, win);
      } else {
        g[0] = 15;
      }
      omp_unset_lock(&lock);
#pragma omp barrier
#pragma omp master
      {
#pragma omp task
        {
          MPI_Put(h, 1, MPI_INT, 1, 5, 1, MPI_INT, win);
          MPI_Win_flush_local(1, win);
        }
#pragma omp taskwait
        h[0] = 16;
      }
#pragma omp barrier
#pragma omp for schedule(static) nowait
      for (int i = 0; i < 8; i++) MPI_Put(&k[i], 1, MPI_INT, 1, 8 + i, 1, MPI_INT, win); // @C
#pragma omp for schedule(static, 1) nowait
      for (int i = 0; i < 8; i++) k[i] = i;                                               // @D
    }
  }
  MPI_Win_unlock_all(win);
  omp_destroy_lock(&lock);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
