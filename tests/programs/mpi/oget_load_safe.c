/* O-GET x LOAD fixed: flush_local makes the fetched data available first.  ranks: 2  expect: none */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {7, 7, 7, 7}, buf[4] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Get(buf, 2, MPI_INT, 1, 0, 2, MPI_INT, win);
    MPI_Win_flush_local(1, win);
    printf("got %d\n", buf[1]);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
