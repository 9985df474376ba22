/* Rank 0 races an MPI_Put with a store (@A, @B), then every rank waits: in a barrier that never
 * completes ("hang": rank 2 never arrives), or rank 2 dies ("kill": SIGKILL, "abort": MPI_Abort).
 * Rank 0 prints "waiting" once every rank passed the first barrier. ranks: 3 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, win_buf[4] = {0}, buf[4] = {1, 2, 3, 4};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Put(buf, 4, MPI_INT, 1, 0, 4, MPI_INT, win); // @A
    buf[1] = 42;                                     // @B
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("waiting\n");
    fflush(stdout);
  }
  const char *how = argc > 1 ? argv[1] : "hang";
  if (rank == 2) {
    if (strcmp(how, "kill") == 0) raise(SIGKILL);
    if (strcmp(how, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 7);
    for (;;) sleep(1); /* "hang" */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
