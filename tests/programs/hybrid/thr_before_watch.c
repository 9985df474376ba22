/* Accesses made before memory is first an RMA buffer (MPI_THREAD_MULTIPLE): the tracer watches a
 * buffer only from its first RMA call on, and keeps every thread's recent accesses until then.
 *  - thread 1 stores into a while thread 0 sleeps, then thread 0 puts from a: nothing orders the
 *    store with the put (race, although the store happened first);
 *  - the same with b and a barrier between the store and the put (no race);
 *  - thread 1 reads c while thread 0 gets into c (race: the get writes c).
 * ranks: 2  flags: -fopenmp  expect: @B races with @A; @D races with @C */
#include <mpi.h>
#include <omp.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int provided, rank, *win_buf, a[4] = {0}, b[4] = {0}, c[4] = {0}, sink = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
#pragma omp parallel num_threads(2) reduction(+ : sink)
    {
      int t = omp_get_thread_num();
      if (t == 1) a[1] = 7;                                        // @B
      if (t == 0) {
        usleep(100000);
        MPI_Put(a, 4, MPI_INT, 1, 0, 4, MPI_INT, win);             // @A
        MPI_Win_flush_local(1, win);
      }
      if (t == 1) b[2] = 8;
#pragma omp barrier
      if (t == 0) {
        MPI_Put(b, 4, MPI_INT, 1, 4, 4, MPI_INT, win);
        MPI_Win_flush_local(1, win);
      }
#pragma omp barrier
      if (t == 1) sink += c[3];                                    // @D
      if (t == 0) {
        usleep(100000);
        MPI_Get(c, 4, MPI_INT, 1, 8, 4, MPI_INT, win);             // @C
        MPI_Win_flush_local(1, win);
      }
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return sink == 12345;
}
