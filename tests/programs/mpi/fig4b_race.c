/* Seed 001 Fig. 4b / Table 1 T-PUT x T-GET: a Put from rank 0 and a Get by rank 1 hit the same
 * window location of rank 1 in one fence epoch.  ranks: 2  expect: @B races with @A */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Put(buf, 1, MPI_INT, 1, 2, 1, MPI_INT, win);     // @A
  if (rank == 1) MPI_Get(buf + 3, 1, MPI_INT, 1, 2, 1, MPI_INT, win); // @B
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
