/* Reads a stale host copy (@stale), then overflows the stack by unbounded recursion, on the host
 * ("host") or inside a target region ("target"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define N 64
#pragma omp declare target
static long deep(volatile char *prev, long n) {
  volatile char frame[256];
  frame[0] = prev ? prev[0] + 1 : 0;
  return deep(frame, n + 1) + frame[n & 255]; /* not a tail call */
}
#pragma omp end declare target
int main(int argc, char **argv) {
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target map(to: a[0:N])
  for (int i = 0; i < N; i++) a[i] *= 2;
  long s = 0;
  for (int i = 0; i < N; i++) s += a[i]; // @stale
  printf("sum %ld\n", s);
  fflush(stdout);
  long r = 0;
  if (argc > 1 && strcmp(argv[1], "target") == 0) {
#pragma omp target map(from: r)
    r = deep(0, 0);
  } else {
    r = deep(0, 0);
  }
  printf("%ld\n", r);
  return 0;
}
