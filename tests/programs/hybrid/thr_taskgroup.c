/* Explicit tasks around RMA calls (MPI_THREAD_MULTIPLE, rank 0).
 *  - taskgroup: a task puts from t1 and completes it; its creator stores into t1 inside the
 *    taskgroup (race) and again after the taskgroup ends (no race);
 *  - depend on the wrong object: depend(out: t2) gets into t2, depend(in: t3) reads t2 (race);
 *  - depend(out: t4) puts from t4 and completes it, depend(inout: t4) rewrites t4 (no race);
 *  - taskloop (its implicit taskgroup): tasks get into t5[i] and complete; t5 is read after (no race).
 * ranks: 2  flags: -fopenmp  expect: @B races with @A; @D races with @C */
#include <mpi.h>
#include <omp.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int provided, rank, *wb, t1[2] = {0}, t2[2] = {0}, t3 = 0, t4[2] = {0}, t5[4] = {0}, sink = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(32 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wb, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp taskgroup
      {
#pragma omp task
        {
          MPI_Put(t1, 2, MPI_INT, 1, 0, 2, MPI_INT, win);   // @A
          MPI_Win_flush_local(1, win);
        }
        usleep(30000);
        t1[0] = 1;                                         // @B
      }
      t1[1] = 2;
#pragma omp task depend(out : t2)
      {
        MPI_Get(t2, 2, MPI_INT, 1, 2, 2, MPI_INT, win);   // @C
        MPI_Win_flush_local(1, win);
      }
#pragma omp task depend(in : t3)
      {
        usleep(30000);
        sink += t2[1] + t3;                                // @D
      }
#pragma omp task depend(out : t4)
      {
        MPI_Put(t4, 2, MPI_INT, 1, 4, 2, MPI_INT, win);
        MPI_Win_flush_local(1, win);
      }
#pragma omp task depend(inout : t4)
      t4[0] = 3;
#pragma omp taskloop num_tasks(4)
      for (int i = 0; i < 4; i++) {
        MPI_Get(&t5[i], 1, MPI_INT, 1, 8 + i, 1, MPI_INT, win);
        MPI_Win_flush_local(1, win);
      }
      sink += t5[0] + t5[3];
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return sink == 12345;
}
