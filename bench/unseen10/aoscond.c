// Array of structs with a liveness field: only live particles move (a conditional update of two fields
// of a 24-byte struct), the dead ones skipped.
#include <stdio.h>
#include <stdlib.h>
typedef struct { float x, y, vx, vy; int alive, pad; } P;
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000000, steps = argc > 2 ? atoi(argv[2]) : 20;
  P *p = malloc(sizeof(P) * n);
  for (int i = 0; i < n; i++) p[i] = (P){i * 0.1f, 0, 0.5f, (i % 5) * 0.1f, (i * 2654435761u >> 7) % 4 != 0, 0};
#pragma omp target data map(tofrom: p[0:n])
  for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      if (p[i].alive) {
        p[i].x += 0.1f * p[i].vx;
        p[i].y += 0.1f * p[i].vy;
      }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += p[i].x + p[i].y;
  printf("aoscond %.3f\n", sum);
  return 0;
}
