/* A window on a sub-communicator (world ranks 0 and 2) created before a world window: window
 * ids agree across ranks and group ranks become world ranks.  ranks: 3  expect: @B races with @A */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, a[2] = {0}, b[2] = {0}, v = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm even;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &even);
  MPI_Win wa = MPI_WIN_NULL, wb;
  if (rank % 2 == 0) MPI_Win_create(a, sizeof a, sizeof(int), MPI_INFO_NULL, even, &wa);
  MPI_Win_create(b, sizeof b, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wb);
  if (rank % 2 == 0) {
    MPI_Win_fence(0, wa);
    if (rank == 0) MPI_Put(&v, 1, MPI_INT, 1, 1, 1, MPI_INT, wa); // @A
    if (rank == 2) a[1] = 5;                                      // @B
    MPI_Win_fence(0, wa);
    MPI_Win_free(&wa);
  }
  MPI_Win_free(&wb);
  MPI_Comm_free(&even);
  MPI_Finalize();
  return 0;
}
