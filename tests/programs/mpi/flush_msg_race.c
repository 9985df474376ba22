/* A message orders the ranks, but MPI_Win_flush_local only completes the Put at the origin:
 * rank 1's store may still collide with it.  ranks: 2  expect: @B races with @A */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, token = 0, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Put(buf, 2, MPI_INT, 1, 0, 2, MPI_INT, win); // @A
    MPI_Win_flush_local(1, win);
    MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    win_buf[1] = 5;                                  // @B
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
