/* Concurrent accumulates with the same op and basic type are atomic.  ranks: 3  expect: none */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, one = 1, old = 0, *win_buf;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win);
  if (rank == 2) MPI_Fetch_and_op(&one, &old, MPI_INT, 1, 0, MPI_SUM, win);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
