/* Target displacements scale by the target's disp_unit: 1 (MPI_Win_create over bytes), 4
 * (MPI_Win_allocate of ints), 8 (MPI_Win_allocate_shared of doubles) and absolute addresses in a
 * dynamic window (MPI_Win_attach). Ranks 0 and 2 write rank 1's memory in one epoch.
 *  du 1: int at byte 4 vs int at byte 8: no race; int at byte 12 vs short at byte 14: race
 *  du 4: int at 1 vs int at 2: no race
 *  du 8: double at 1 (bytes 8..15) vs int at 3 of an int view (disp 1 = bytes 8..11): race;
 *        double at 2 vs double at 3: no race
 *  dynamic: int at &buf[0] vs int at &buf[1]: no race
 * ranks: 3  expect: @B races with @A; @D races with @C */
#include <mpi.h>
#include <stdint.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, one = 1, *w4;
  short s1 = 1;
  double d1 = 1.0, *w8;
  char bytes[32] = {0};
  int dyn[4] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win1, win4, win8, wdyn;
  MPI_Win_create(bytes, sizeof bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win1);
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w4, &win4);
  MPI_Win_allocate_shared(8 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &w8, &win8);
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wdyn);
  MPI_Win_attach(wdyn, dyn, sizeof dyn);
  MPI_Aint base = 0, bases[3];
  MPI_Get_address(dyn, &base);
  MPI_Allgather(&base, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
  MPI_Win wins[4] = {win1, win4, win8, wdyn};
  for (int i = 0; i < 4; i++) MPI_Win_lock_all(0, wins[i]);
  if (rank == 0) {
    MPI_Put(&one, 1, MPI_INT, 1, 4, 1, MPI_INT, win1);
    MPI_Put(&one, 1, MPI_INT, 1, 12, 1, MPI_INT, win1);       // @A
    MPI_Put(&one, 1, MPI_INT, 1, 1, 1, MPI_INT, win4);
    MPI_Put(&d1, 1, MPI_DOUBLE, 1, 1, 1, MPI_DOUBLE, win8);   // @C
    MPI_Put(&d1, 1, MPI_DOUBLE, 1, 2, 1, MPI_DOUBLE, win8);
    MPI_Put(&one, 1, MPI_INT, 1, bases[1], 1, MPI_INT, wdyn);
  }
  if (rank == 2) {
    MPI_Put(&one, 1, MPI_INT, 1, 8, 1, MPI_INT, win1);
    MPI_Put(&s1, 1, MPI_SHORT, 1, 14, 1, MPI_SHORT, win1);    // @B
    MPI_Put(&one, 1, MPI_INT, 1, 2, 1, MPI_INT, win4);
    MPI_Put(&one, 1, MPI_INT, 1, 1, 1, MPI_INT, win8);        // @D
    MPI_Put(&d1, 1, MPI_DOUBLE, 1, 3, 1, MPI_DOUBLE, win8);
    MPI_Put(&one, 1, MPI_INT, 1, bases[1] + sizeof(int), 1, MPI_INT, wdyn);
  }
  for (int i = 0; i < 4; i++) MPI_Win_unlock_all(wins[i]);
  MPI_Win_detach(wdyn, dyn);
  for (int i = 0; i < 4; i++) MPI_Win_free(&wins[i]);
  MPI_Finalize();
  return 0;
}
