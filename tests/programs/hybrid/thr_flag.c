/* Flag protocols between threads (MPI_THREAD_MULTIPLE), OpenMP 5.2 flush-sync: a release write and
 * an acquire read of one flag order the writer's earlier work before the reader's later work.
 *  a: put, flush_local, `atomic write seq_cst` flag; the other thread spins on `atomic read seq_cst`
 *     and then reuses a (no race);
 *  b: get, flush_local, `flush` + relaxed `atomic write`; the reader spins on relaxed reads, then
 *     `flush`, then reads b (no race);
 *  c: the flag is set before the put is completed: the reader's store into c races with the put;
 *  d: relaxed atomics without any flush synchronise nothing: the store into d races with the put;
 *  window side: rank 1's thread 1 stores into its window and sets a seq_cst flag, its thread 0 waits
 *     for the flag and joins the MPI_Barrier after which rank 0 puts there (no race).
 * ranks: 2  flags: -fopenmp  expect: @B races with @A; @D races with @C */
#include <mpi.h>
#include <omp.h>
#include <unistd.h>
static void wait_seq_cst(int *flag) {
  int f = 0;
  while (!f) {
#pragma omp atomic read seq_cst
    f = *flag;
  }
}
int main(int argc, char **argv) {
  int provided, rank, *win_buf, a[2] = {0}, b[2] = {0}, c[2] = {0}, d[2] = {0}, sink = 0;
  int fa = 0, fb = 0, fc = 0, fd = 0, fw = 0, one = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
#pragma omp parallel num_threads(2) reduction(+ : sink)
    {
      if (omp_get_thread_num() == 0) {
        MPI_Put(a, 2, MPI_INT, 1, 0, 2, MPI_INT, win);
        MPI_Win_flush_local(1, win);
#pragma omp atomic write seq_cst
        fa = 1;
        MPI_Get(b, 2, MPI_INT, 1, 2, 2, MPI_INT, win);
        MPI_Win_flush_local(1, win);
#pragma omp flush
#pragma omp atomic write
        fb = 1;
        MPI_Put(c, 2, MPI_INT, 1, 4, 2, MPI_INT, win);   // @A
#pragma omp atomic write seq_cst
        fc = 1;
        usleep(50000);
        MPI_Win_flush_local(1, win);
        MPI_Put(d, 2, MPI_INT, 1, 6, 2, MPI_INT, win);   // @C
        MPI_Win_flush_local(1, win);
#pragma omp atomic write
        fd = 1;
      } else {
        wait_seq_cst(&fa);
        a[0] = 1;
        int f = 0;
        while (!f) {
#pragma omp atomic read
          f = fb;
        }
#pragma omp flush
        sink += b[1];
        wait_seq_cst(&fc);
        c[0] = 1;                                        // @B
        f = 0;
        while (!f) {
#pragma omp atomic read
          f = fd;
        }
        d[0] = 1;                                        // @D
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Put(&one, 1, MPI_INT, 1, 8, 1, MPI_INT, win);
  } else {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1) {
        win_buf[8] = 5;
#pragma omp atomic write seq_cst
        fw = 1;
      } else {
        wait_seq_cst(&fw);
        MPI_Barrier(MPI_COMM_WORLD);
      }
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return sink == 12345;
}
