/* Particles as an array of 24-byte structs with a liveness field: only the live ones (~75%, from a hash of
 * the index) move, each reading and writing two fields (not adjacent: per access, adjacent ones would be one
 * run): conditional streams whose elements are 24 bytes apart and interleave with the other fields. The velocities are mapped `alloc` in a second array of
 * structs (`q`, the same layout) whose `vy` the host sets but never copies: `q[i].vy` is read uninitialised. */
#include <stdio.h>
#include <stdlib.h>
typedef struct { float x, y, vx, vy; int alive, tag; } P;
static void move(P *p, const P *q, int n) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++)
    if (p[i].alive) {
      p[i].x += 0.1f * p[i].vx;
      p[i].vy -= 0.1f * q[i].vy; /* expect use-of-uninitialized-memory q */
    }
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 400;
  P *p = malloc(sizeof(P) * n), *q = malloc(sizeof(P) * n);
  for (int i = 0; i < n; i++) {
    p[i] = (P){i * 0.5f, 1, 0.25f, 0.5f, (int)((i * 2654435761u >> 7) % 4 != 0), i};
    q[i] = (P){0, 0, 0, 0.75f, 1, i};
  }
#pragma omp target data map(tofrom: p[0:n]) map(alloc: q[0:n])
  for (int s = 0; s < 2; s++) move(p, q, n);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += p[i].x;
  printf("%.3f\n", sum);
  free(p); free(q);
  return 0;
}
