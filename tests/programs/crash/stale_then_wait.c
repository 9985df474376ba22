/* Reads a stale host copy (@stale: `a` is mapped `to` only), says "ready", then waits for ever:
 * the recording is ended from outside (signal, time limit). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#define N 256
int main(void) {
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target map(to: a[0:N])
  for (int i = 0; i < N; i++) a[i] += 1;
  long s = 0;
  for (int i = 0; i < N; i++) s += a[i]; // @stale
  printf("ready %ld\n", s);
  fflush(stdout);
  for (;;) sleep(1);
}
