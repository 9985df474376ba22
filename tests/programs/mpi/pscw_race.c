/* PSCW: rank 1 reads its window between MPI_Win_post and MPI_Win_wait, while rank 0's Put
 * may land.  ranks: 2  expect: @B races with @A */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, peer, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Group world, other;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  peer = 1 - rank;
  MPI_Group_incl(world, 1, &peer, &other);
  if (rank == 0) {
    MPI_Win_start(other, 0, win);
    MPI_Put(buf, 1, MPI_INT, 1, 0, 1, MPI_INT, win); // @A
    MPI_Win_complete(win);
  } else {
    MPI_Win_post(other, 0, win);
    printf("%d\n", win_buf[0]);                      // @B
    MPI_Win_wait(win);
  }
  MPI_Group_free(&other);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
