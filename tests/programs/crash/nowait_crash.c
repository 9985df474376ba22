/* A nowait kernel reads device memory nobody initialised (@uninit: `b` is map(alloc)) and keeps
 * running on a helper thread while the host thread aborts: the kernel's pending accesses must still
 * be in the log. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#define N 512
int main(void) {
  double *b = malloc(N * sizeof(double));
  double sum = 0;
#pragma omp target map(alloc: b[0:N]) map(tofrom: sum) nowait
  {
    for (int i = 0; i < N; i++) sum += b[i]; // @uninit
    for (volatile long k = 0; k < (1L << 40); k++) {
    }
  }
  usleep(300000);
  printf("aborting\n");
  fflush(stdout);
  abort();
}
