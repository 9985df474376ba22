/* The origin buffer of a pending MPI_Put is refilled by a short loop that -O1 turns into an
 * inline-expanded memcpy (vector moves): reported clean before (tests/tracer/test_opt_levels.py). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double win_buf[8] = {0}, buf[8], next[8];
  for (int i = 0; i < 8; i++) next[i] = rank * 10 + i;
  MPI_Win win;
  MPI_Win_create(win_buf, sizeof win_buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  for (int i = 0; i < 8; i++) buf[i] = rank;
  MPI_Win_lock_all(0, win);
  MPI_Put(buf, 8, MPI_DOUBLE, 1 - rank, 0, 8, MPI_DOUBLE, win);
  for (int i = 0; i < 8; i++)
    buf[i] = next[i];
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  printf("%g\n", buf[3] + win_buf[2]);
  MPI_Finalize();
  return 0;
}
