/* MPI_THREAD_FUNNELED: the master thread makes every MPI call, the other thread touches the same
 * memory. Origin side: a store into the Put's buffer by another thread races unless the Put is
 * completed (flush_local) and an OpenMP barrier orders the store after it. Window side: a store
 * into the window by another thread reaches the remote MPI_Get only if the thread's store is
 * ordered (OpenMP barrier) before the master's MPI_Barrier. `posted` (a plain volatile flag, which
 * OpenMP does not count as synchronisation) makes @B happen after @A in real time, so the tracer
 * already watches `a` when the store runs (a store before the buffer's first RMA call is not seen).
 * ranks: 2  flags: -fopenmp  expect: @B races with @A; @D races with @C */
#include <mpi.h>
#include <omp.h>
static volatile int posted;
int main(int argc, char **argv) {
  int provided, rank, *win_buf, a[2] = {1, 2}, b[2] = {3, 4}, got[2];
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  for (int i = 0; i < 8; i++) win_buf[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    if (rank == 0 && t == 0) MPI_Put(a, 1, MPI_INT, 1, 0, 1, MPI_INT, win); // @A
    if (rank == 0 && t == 0) posted = 1;
    if (rank == 0 && t == 1) {
      while (!posted) {
      }
      a[0] = 5; // @B
    }
#pragma omp barrier
    if (rank == 0 && t == 0) {
      MPI_Put(b, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
      MPI_Win_flush_local(1, win);
    }
#pragma omp barrier
    if (rank == 0 && t == 1) b[0] = 6;   /* completed and ordered: no race */
    if (rank == 1 && t == 1) win_buf[4] = 7;   /* before the barrier below: reaches the Get */
    if (rank == 1 && t == 1) win_buf[5] = 8;
#pragma omp barrier
    if (t == 0) MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && t == 1) win_buf[5] = 9;   // @D not ordered before the master's MPI_Barrier
    if (rank == 0 && t == 0) {
      MPI_Get(got, 1, MPI_INT, 1, 4, 1, MPI_INT, win);
      MPI_Get(got + 1, 1, MPI_INT, 1, 5, 1, MPI_INT, win); // @C
      MPI_Win_flush(1, win);
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
