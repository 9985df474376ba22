/* Accumulate atomicity (MPI-4.0 12.7.1, default accumulate_ops same_op_no_op): concurrent
 * accumulate-family calls on the same bytes are atomic only with the same predefined datatype and
 * the same op or MPI_NO_OP. Ranks 0 and 2 update rank 1's window (disp_unit 4) in one epoch.
 *  int 0: MPI_INT + MPI_SUM on both sides: no race
 *  int 1: MPI_INT vs MPI_FLOAT (same 4 bytes, different basic datatype): race
 *  int 2: MPI_SUM vs MPI_MAX: race
 *  int 3: MPI_SUM vs MPI_Get_accumulate(MPI_NO_OP): no race
 *  int 4: MPI_Fetch_and_op(MPI_SUM) vs MPI_Accumulate(MPI_SUM): no race
 *  int 5: MPI_Raccumulate(MPI_INT, MPI_SUM) vs MPI_Rget_accumulate(MPI_UNSIGNED, MPI_SUM): race
 * ranks: 3  expect: @B races with @A; @D races with @C; @F races with @E */
#include <mpi.h>
#include <stddef.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, one = 1, res = 0, res2 = 0, *win_buf;
  unsigned uone = 1, ures = 0;
  float fone = 1.0f;
  MPI_Request rq;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, 1, 1, 1, MPI_INT, MPI_SUM, win); // @A
    MPI_Accumulate(&one, 1, MPI_INT, 1, 2, 1, MPI_INT, MPI_SUM, win); // @C
    MPI_Accumulate(&one, 1, MPI_INT, 1, 3, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, 1, 4, 1, MPI_INT, MPI_SUM, win);
    MPI_Raccumulate(&one, 1, MPI_INT, 1, 5, 1, MPI_INT, MPI_SUM, win, &rq); // @E
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
  }
  if (rank == 2) {
    MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&fone, 1, MPI_FLOAT, 1, 1, 1, MPI_FLOAT, MPI_SUM, win); // @B
    MPI_Accumulate(&one, 1, MPI_INT, 1, 2, 1, MPI_INT, MPI_MAX, win);     // @D
    MPI_Get_accumulate(NULL, 0, MPI_INT, &res, 1, MPI_INT, 1, 3, 1, MPI_INT, MPI_NO_OP, win);
    MPI_Fetch_and_op(&one, &res2, MPI_INT, 1, 4, MPI_SUM, win);
    MPI_Rget_accumulate(&uone, 1, MPI_UNSIGNED, &ures, 1, MPI_UNSIGNED, 1, 5, 1, MPI_UNSIGNED, MPI_SUM, win, &rq); // @F
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
