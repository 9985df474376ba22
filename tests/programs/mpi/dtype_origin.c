/* Derived origin and result datatypes compare the bytes their type maps really touch (rank 0's
 * local buffers, one lock_all epoch, nothing completed until the end).
 *  a: MPI_Get into vector(4, 1, 2) of a (even ints), store into a[1], a gap: no race
 *  b: MPI_Get into the even ints of b and into the even ints of b + 1 (the odd ones): no race
 *  c: MPI_Get into the even ints of c and into the even ints of c + 2: ints 2, 4, 6 overlap: race
 *  d: MPI_Put from the even ints of d, store into d[3] (gap): no race; store into d[4]: race
 *  e: MPI_Get_accumulate with result type resized(MPI_INT, extent 8) x 2 (e[0], e[2]), load of e[1]:
 *     no race
 * ranks: 2  expect: @B races with @A; @D races with @C */
#include <mpi.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, *win_buf, a[8] = {0}, b[8] = {0}, c[10] = {0}, d[8] = {0}, e[4] = {0}, one[2] = {1, 1}, sink;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  MPI_Datatype even, spaced;
  MPI_Type_vector(4, 1, 2, MPI_INT, &even);
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &spaced);
  MPI_Type_commit(&even);
  MPI_Type_commit(&spaced);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Get(a, 1, even, 1, 0, 4, MPI_INT, win);
    a[1] = 5;
    MPI_Get(b, 1, even, 1, 8, 4, MPI_INT, win);
    MPI_Get(b + 1, 1, even, 1, 16, 4, MPI_INT, win);
    MPI_Get(c, 1, even, 1, 24, 4, MPI_INT, win);      // @A
    MPI_Get(c + 2, 1, even, 1, 32, 4, MPI_INT, win);  // @B
    MPI_Put(d, 1, even, 1, 40, 4, MPI_INT, win);      // @C
    d[3] = 6;
    d[4] = 7;                                         // @D
    MPI_Get_accumulate(one, 2, MPI_INT, e, 2, spaced, 1, 48, 2, MPI_INT, MPI_SUM, win);
    sink = e[1];
  }
  MPI_Win_unlock_all(win);
  MPI_Type_free(&even);
  MPI_Type_free(&spaced);
  MPI_Win_free(&win);
  MPI_Finalize();
  return rank == 0 && sink == 12345;
}
