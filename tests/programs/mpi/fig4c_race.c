/* Seed 001 Fig. 4c / Table 1 T-PUT x T-PUT: ranks 0 and 2 put to the same location of rank 1
 * under shared locks (lock_all).  ranks: 3  expect: @B races with @A */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) MPI_Put(buf, 1, MPI_INT, 1, 0, 1, MPI_INT, win); // @A
  if (rank == 2) MPI_Put(buf, 1, MPI_INT, 1, 0, 1, MPI_INT, win); // @B
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
