/* Table 1 O-GET x O-PUT: a Put sends a buffer that a pending Get is still writing.
 * ranks: 2  expect: @B races with @A */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[8] = {0}, buf[2] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Get(buf, 2, MPI_INT, 1, 0, 2, MPI_INT, win); // @A
    MPI_Put(buf, 2, MPI_INT, 1, 4, 2, MPI_INT, win); // @B
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
