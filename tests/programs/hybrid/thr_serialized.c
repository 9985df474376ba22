/* MPI_THREAD_SERIALIZED: any thread may call MPI, never two at once (here: tasks ordered by
 * `depend`, a critical section, and `single`).
 *  - depend(out) task puts a and completes it, the depend(in) sibling task stores into a (no race);
 *  - a sibling task without depend stores into b while the first task's Put of b may be in flight:
 *    the put is completed in the task, but nothing orders the two tasks (race);
 *  - each thread's Accumulate into rank 1's window inside a critical section: the same op and
 *    datatype (no race), then thread 1 adds with MPI_SUM on int 6 and thread 0 with MPI_BOR (race);
 *  - rank 1 reads its own window after the ranks' MPI_Barrier that its master thread calls once
 *    the team has joined (no race).
 * ranks: 2  flags: -fopenmp  expect: @B races with @A; @C races with @D */
#include <mpi.h>
#include <omp.h>
int main(int argc, char **argv) {
  int provided, rank, *win_buf, a[1] = {1}, b[1] = {2}, one = 1, sum = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  for (int i = 0; i < 8; i++) win_buf[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    MPI_Put(a, 1, MPI_INT, 1, 2, 1, MPI_INT, win);   /* a and b are watched from here on */
    MPI_Put(b, 1, MPI_INT, 1, 3, 1, MPI_INT, win);
    MPI_Win_flush_local_all(win);
#pragma omp parallel num_threads(2)
    {
#pragma omp single
      {
#pragma omp task depend(out : a[0])
        {
          MPI_Put(a, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
          MPI_Win_flush_local(1, win);
        }
#pragma omp task depend(in : a[0])
        a[0] = 5;
#pragma omp task
        {
          MPI_Put(b, 1, MPI_INT, 1, 1, 1, MPI_INT, win); // @A
          MPI_Win_flush_local(1, win);
        }
#pragma omp task
        b[0] = 6;                                         // @B
      }
      int t = omp_get_thread_num();
#pragma omp critical
      MPI_Accumulate(&one, 1, MPI_INT, 1, 5, 1, MPI_INT, MPI_SUM, win);
#pragma omp critical
      {
        if (t == 1) MPI_Accumulate(&one, 1, MPI_INT, 1, 6, 1, MPI_INT, MPI_SUM, win); // @C
        if (t == 0) MPI_Accumulate(&one, 1, MPI_INT, 1, 6, 1, MPI_INT, MPI_BOR, win); // @D
      }
    }
    MPI_Win_flush_all(win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
#pragma omp parallel num_threads(2) reduction(+ : sum)
    sum += win_buf[5];
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
