/* MPI_THREAD_FUNNELED: only the master thread calls MPI; the other threads touch RMA buffers and
 * window memory, ordered (or not) with the master's MPI calls by OpenMP.
 *  - fence: the master puts from u inside a fence epoch while thread 1 stores into u before the
 *    closing fence with no barrier between (race);
 *  - fence: the threads fill rank 1's window in a parallel loop, the fence after the join exposes
 *    it to rank 0's put (no race);
 *  - PSCW: rank 1's master posts and waits while its thread 1 stores into the exposed int (race
 *    with rank 0's put);
 *  - PSCW: the same store before an omp barrier that precedes the post, a read after the barrier
 *    that follows the wait (no race);
 *  - exclusive lock: rank 1's master locks its own window exclusively around a parallel loop that
 *    writes the ints rank 0 puts to under its own exclusive lock (no race).
 * ranks: 2  flags: -fopenmp  expect: @B races with @A; @D races with @C */
#include <mpi.h>
#include <omp.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int provided, rank, *wb, u[4] = {1, 2, 3, 4}, v = 7, sink = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wb, &win);
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int other = 1 - rank;
  MPI_Group_incl(world, 1, &other, &peer);

  MPI_Win_fence(0, win);
#pragma omp parallel num_threads(2)
  {
#pragma omp master
    if (rank == 0) MPI_Put(u, 4, MPI_INT, 1, 0, 4, MPI_INT, win);      // @A
    if (rank == 0 && omp_get_thread_num() == 1) { usleep(30000); u[2] = 0; } // @B
  }
  MPI_Win_fence(0, win);

  if (rank == 1) {
#pragma omp parallel for num_threads(2)
    for (int i = 8; i < 16; i++) wb[i] = i;
  }
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Put(u, 4, MPI_INT, 1, 8, 4, MPI_INT, win);
  MPI_Win_fence(0, win);

  if (rank == 0) {
    MPI_Win_start(peer, 0, win);
    MPI_Put(&v, 1, MPI_INT, 1, 20, 1, MPI_INT, win);                   // @C
    MPI_Win_complete(win);
  } else {
#pragma omp parallel num_threads(2)
    {
#pragma omp master
      {
        MPI_Win_post(peer, 0, win);
        MPI_Win_wait(win);
      }
      if (omp_get_thread_num() == 1) { usleep(30000); wb[20] = 1; }    // @D
    }
  }

  if (rank == 0) {
    MPI_Win_start(peer, 0, win);
    MPI_Put(&v, 1, MPI_INT, 1, 24, 1, MPI_INT, win);
    MPI_Win_complete(win);
  } else {
#pragma omp parallel num_threads(2) reduction(+ : sink)
    {
      if (omp_get_thread_num() == 1) wb[24] = 1;
#pragma omp barrier
#pragma omp master
      {
        MPI_Win_post(peer, 0, win);
        MPI_Win_wait(win);
      }
#pragma omp barrier
      sink += wb[24];
    }
  }

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(u, 4, MPI_INT, 1, 28, 4, MPI_INT, win);
    MPI_Win_unlock(1, win);
  } else {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
#pragma omp parallel for num_threads(2)
    for (int i = 28; i < 32; i++) wb[i] += i;
    MPI_Win_unlock(1, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return sink == 12345;
}
