/* A column of a row-major window: rank 1 reads column 3 of its 32x32 window (one element every
 * 128 bytes) while rank 0's Put into row 5 of that column is in flight (same fence epoch). The
 * tracer records the column as one strided access run (test_mpi_programs: one ACCESS row).
 * ranks: 2  expect: @B races with @A */
#include <mpi.h>
#include <stdio.h>
#define N 32
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, one = 1, sum = 0;
  static int w[N * N];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(w, sizeof w, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Put(&one, 1, MPI_INT, 1, 5 * N + 3, 1, MPI_INT, win); // @A
  if (rank == 1)
    for (int i = 0; i < N; i++) sum += w[i * N + 3]; // @B
  MPI_Win_fence(0, win);
  if (rank == 1) printf("%d\n", sum);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
