/* Derived target datatypes compare the bytes their type maps really touch. Ranks 0 and 2 put into
 * rank 1's window of 32 ints (disp_unit 4) in one epoch.
 *  ints 0..7: vector(4, 1, 2) of MPI_INT at 0 (even ints) vs the same at 1 (odd ints): no overlap
 *  ints 8..11: contiguous(2) at 8 vs indexed {2 at 0, 1 at 3} at 9 (ints 9, 10, 12): int 9 overlaps: race
 *  ints 16..19: resized(MPI_INT, extent 8) x 2 at 16 (ints 16, 18) vs one MPI_INT at 17: no overlap
 *  ints 20..23: struct {int at 0, int at 8} at 20 (ints 20, 22) vs hvector(2, 1, 8 bytes) at 21
 *               (ints 21, 23): no overlap; vs one MPI_INT at 22: race
 * ranks: 3  expect: @B races with @A; @D races with @C */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, *win_buf, src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(32 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  MPI_Datatype even, pair, idx, spaced, two, hv;
  MPI_Type_vector(4, 1, 2, MPI_INT, &even);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  int lens[2] = {2, 1}, displs[2] = {0, 3};
  MPI_Type_indexed(2, lens, displs, MPI_INT, &idx);
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &spaced);
  int blens[2] = {1, 1};
  MPI_Aint bdisp[2] = {0, 2 * sizeof(int)};
  MPI_Datatype btypes[2] = {MPI_INT, MPI_INT};
  MPI_Type_create_struct(2, blens, bdisp, btypes, &two);
  MPI_Type_create_hvector(2, 1, 2 * sizeof(int), MPI_INT, &hv);
  MPI_Datatype all[6] = {even, pair, idx, spaced, two, hv};
  for (int i = 0; i < 6; i++) MPI_Type_commit(&all[i]);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Put(src, 4, MPI_INT, 1, 0, 1, all[0], win);
    MPI_Put(src, 2, MPI_INT, 1, 8, 1, all[1], win);   // @A
    MPI_Put(src, 2, MPI_INT, 1, 16, 2, all[3], win);
    MPI_Put(src, 2, MPI_INT, 1, 20, 1, all[4], win);  // @C
  }
  if (rank == 2) {
    MPI_Put(src, 4, MPI_INT, 1, 1, 1, all[0], win);
    MPI_Put(src, 3, MPI_INT, 1, 9, 1, all[2], win);   // @B
    MPI_Put(src, 1, MPI_INT, 1, 17, 1, MPI_INT, win);
    MPI_Put(src, 2, MPI_INT, 1, 21, 1, all[5], win);
    MPI_Win_flush(1, win);
    MPI_Put(src, 1, MPI_INT, 1, 22, 1, MPI_INT, win); // @D
  }
  MPI_Win_unlock_all(win);
  for (int i = 0; i < 6; i++) MPI_Type_free(&all[i]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
