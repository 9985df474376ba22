// Hybrid MPI-RMA halo exchange: MPI_THREAD_FUNNELED, the master thread puts the halo, OpenMP threads
// sweep the interior (every thread's loads and stores go through the tracer's recent-access rings).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 200000, iters = argc > 2 ? atoi(argv[2]) : 100;
  double *u, *v = malloc((n + 2) * sizeof(double));
  MPI_Win win;
  MPI_Win_allocate((n + 2) * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &u, &win);
#pragma omp parallel for
  for (int i = 0; i < n + 2; i++) u[i] = rank;
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int it = 0; it < iters; it++) {
    MPI_Win_fence(0, win);
    MPI_Put(&u[1], 1, MPI_DOUBLE, left, n + 1, 1, MPI_DOUBLE, win);
    MPI_Put(&u[n], 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
#pragma omp parallel for
    for (int i = 1; i <= n; i++) v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
#pragma omp parallel for
    for (int i = 1; i <= n; i++) u[i] = v[i];
  }
  double s = 0, all = 0;
  for (int i = 1; i <= n; i++) s += u[i];
  MPI_Reduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("halo sum %.3f\n", all);
  MPI_Win_free(&win);
  free(v);
  MPI_Finalize();
  return 0;
}
