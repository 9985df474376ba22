/* Passive target: a barrier inside the epoch orders the ranks, but without MPI_Win_flush the
 * Put may still be in flight when rank 1 reads.  ranks: 2  expect: @B races with @A */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) MPI_Put(buf, 1, MPI_INT, 1, 0, 1, MPI_INT, win); // @A
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) printf("%d\n", win_buf[0]);                      // @B
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
