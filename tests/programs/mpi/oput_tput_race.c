/* Table 1 O-PUT x T-PUT: rank 0 sends part of its own window while rank 1 puts into it.
 * ranks: 2  expect: @B races with @A */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {1, 2, 3, 4}, buf[4] = {9, 9, 9, 9};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Put(win_buf, 2, MPI_INT, 1, 2, 2, MPI_INT, win); // @A
  if (rank == 1) MPI_Put(buf, 1, MPI_INT, 0, 1, 1, MPI_INT, win);     // @B
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
