/* Two independent races in one run: both are reported, not only the first.
 * ranks: 3  expect: @B races with @A; @D races with @C */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Put(buf, 1, MPI_INT, 1, 3, 1, MPI_INT, win); // @A
    buf[0] = 7;                                      // @B
    MPI_Put(buf + 1, 1, MPI_INT, 2, 0, 1, MPI_INT, win); // @C
  }
  if (rank == 1) MPI_Get(buf, 1, MPI_INT, 2, 0, 1, MPI_INT, win); // @D
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
