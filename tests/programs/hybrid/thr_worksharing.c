/* Worksharing constructs of OpenMP 5.2 around RMA calls (MPI_THREAD_MULTIPLE, rank 0 origin side).
 *  - sections: one section gets into s1 and completes it, the other stores into s1: the two
 *    sections run concurrently (race);
 *  - sections: each section puts from its own buffer and completes it; the buffers are rewritten
 *    after the construct's implicit barrier (no race);
 *  - single nowait: the single thread puts from n1 and completes it; the other thread stores into
 *    n1 right after the construct (race);
 *  - ordered: every iteration rewrites o1, puts from it and completes the put inside its ordered
 *    region (no race);
 *  - masked filter(1) + barrier: thread 1 gets into m1 and completes it, every thread reads m1
 *    after the barrier (no race).
 * ranks: 2  flags: -fopenmp  expect: @B races with @A; @D races with @C */
#include <mpi.h>
#include <omp.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int provided, rank, *win_buf, s1[2] = {0}, s2[2] = {0}, s3[2] = {0}, n1[2] = {0}, o1[1] = {0}, m1[2] = {0};
  int sink = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_allocate(32 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
#pragma omp parallel num_threads(2) reduction(+ : sink)
    {
#pragma omp sections
      {
#pragma omp section
        {
          MPI_Get(s1, 2, MPI_INT, 1, 0, 2, MPI_INT, win);  // @A
          MPI_Win_flush_local(1, win);
          usleep(30000); /* the other thread takes the other section */
        }
#pragma omp section
        {
          s1[1] = 3;                                       // @B
        }
      }
#pragma omp sections
      {
#pragma omp section
        {
          MPI_Put(s2, 2, MPI_INT, 1, 2, 2, MPI_INT, win);
          MPI_Win_flush_local(1, win);
        }
#pragma omp section
        {
          MPI_Put(s3, 2, MPI_INT, 1, 4, 2, MPI_INT, win);
          MPI_Win_flush_local(1, win);
        }
      }
#pragma omp single
      s2[0] = s3[0] = 1;
#pragma omp single nowait
      {
        MPI_Put(n1, 2, MPI_INT, 1, 6, 2, MPI_INT, win);   // @C
        MPI_Win_flush_local(1, win);
      }
      usleep(30000);
      n1[omp_get_thread_num()] = 4;                        // @D
#pragma omp barrier
#pragma omp for ordered schedule(static, 1)
      for (int i = 0; i < 4; i++) {
#pragma omp ordered
        {
          o1[0] = i;
          MPI_Put(o1, 1, MPI_INT, 1, 8 + i, 1, MPI_INT, win);
          MPI_Win_flush_local(1, win);
        }
      }
#pragma omp masked filter(1)
      {
        MPI_Get(m1, 2, MPI_INT, 1, 12, 2, MPI_INT, win);
        MPI_Win_flush_local(1, win);
      }
#pragma omp barrier
      sink += m1[1];
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return sink == 12345;
}
