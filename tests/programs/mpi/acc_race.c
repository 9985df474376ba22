/* An accumulate and a plain Put on the same location: only accumulates are atomic.
 * ranks: 3  expect: @B races with @A */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, one = 1, *win_buf;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win); // @A
  if (rank == 2) MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);                 // @B
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
