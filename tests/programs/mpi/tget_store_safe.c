/* T-GET x STORE fixed: the store happens before the fence that opens the Get's epoch.
 * ranks: 2  expect: none */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {5, 6, 7, 8}, buf[4] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rank == 1) win_buf[3] = 9;
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Get(buf, 4, MPI_INT, 1, 0, 4, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
