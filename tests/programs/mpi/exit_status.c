/* Output and exit status pass through `trace record -n`.  ranks: 2  expect: none */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("hello from rank %d of argv %s\n", rank, argc > 1 ? argv[1] : "-");
  MPI_Finalize();
  return 3;
}
