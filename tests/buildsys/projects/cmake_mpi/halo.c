/* Each rank puts its edge into the neighbour's window, then refills the edge buffer
 * for the next step before the Put is complete (no MPI_Win_flush_local): a race. */
#include <mpi.h>
#include <stdio.h>
#define N 64

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double halo[N] = {0}, edge[N];
  MPI_Win win;
  MPI_Win_create(halo, sizeof halo, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  for (int i = 0; i < N; i++)
    edge[i] = rank + i;
  MPI_Win_lock_all(0, win);
  int right = (rank + 1) % size;
  MPI_Put(edge, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win);
  for (int i = 0; i < N; i++)
    edge[i] = 2.0 * edge[i] + 1.0;
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  if (rank == 0)
    printf("done %g\n", edge[1]);
  MPI_Finalize();
  return 0;
}
