/* Rank 1 crashes after the epoch; rank 0's race must still be in the (truncated) log.
 * ranks: 2  expect: @B races with @A */
#include <mpi.h>
#include <signal.h>
#include <unistd.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Put(buf, 4, MPI_INT, 1, 0, 4, MPI_INT, win); // @A
    buf[1] = 42;                                     // @B
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) raise(SIGSEGV);
  sleep(5); /* rank 0 is still running when rank 1 dies */
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
