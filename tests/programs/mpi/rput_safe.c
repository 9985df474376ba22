/* Request-based Put: MPI_Wait completes it at the origin before the buffer is reused.
 * ranks: 2  expect: none */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Request req;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Rput(buf, 4, MPI_INT, 1, 0, 4, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    buf[2] = 0;
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
