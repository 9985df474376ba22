/* Fig. 4c fixed with exclusive locks: the two epochs on rank 1 are serialised.  ranks: 3  expect: none */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rank == 0 || rank == 2) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(buf, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
