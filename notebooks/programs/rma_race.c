/* Two ranks share a window of N ints. Rank 0 puts into rank 1's window while rank 1,
 * in the same fence epoch, stores into the same elements: an MPI-RMA data race
 * (seed 001, Fig. 4 shape (b): a remote put against a local store on the target). */
#include <mpi.h>
#include <stdio.h>
#define N 16

int main(int argc, char **argv) {
  int rank, buf[N], src[N];
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < N; i++) { buf[i] = 0; src[i] = 100 + i; }
  MPI_Win_create(buf, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  MPI_Win_fence(0, win);
  if (rank == 0)
    MPI_Put(src, 4, MPI_INT, 1, 2, 4, MPI_INT, win);   /* writes buf[2..5] on rank 1 */
  if (rank == 1)
    buf[3] = 42;                                        /* races with the put */
  MPI_Win_fence(0, win);

  if (rank == 1) printf("rank 1: buf[3] = %d\n", buf[3]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
