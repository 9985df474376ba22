/* Request-based Get: the result is read before MPI_Wait.  ranks: 2  expect: @B races with @A */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {3, 3, 3, 3}, buf[4] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Request req;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Rget(buf, 4, MPI_INT, 1, 0, 4, MPI_INT, win, &req); // @A
    printf("%d\n", buf[0]);                                 // @B
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
