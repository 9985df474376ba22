/* Particles stored cell by cell (an array of structs, 32 bytes each): each cell's particles are
 * updated field by field by an inner loop, so every field is one strided record per cell, and the
 * records of consecutive cells continue each other. The fields' runs interleave (stride 32, phases 0,
 * 8, 16, 24) without sharing a byte. */
#include <stdio.h>
#include <stdlib.h>
struct part { double x, f, v, m; }; /* (the two fields written apart: no vector store joins them) */
int main(int argc, char **argv) {
  int cells = argc > 1 ? atoi(argv[1]) : 100, per = argc > 2 ? atoi(argv[2]) : 12;
  int n = cells * per;
  struct part *p = malloc(sizeof(struct part) * n);
  int *start = malloc(sizeof(int) * (cells + 1));
  for (int c = 0; c <= cells; c++) start[c] = c * per;
  for (int i = 0; i < n; i++) { p[i].x = i * 0.01; p[i].v = 0.0; p[i].f = (i % 5) * 0.1; p[i].m = 1.0 + (i % 3); }
#pragma omp target data map(tofrom: p[0:n]) map(to: start[0:cells + 1])
  for (int step = 0; step < 3; step++) {
#pragma omp target teams distribute parallel for
    for (int c = 0; c < cells; c++)
      for (int i = start[c]; i < start[c + 1]; i++) {
        p[i].v += p[i].f / p[i].m * 0.1;
        p[i].x += p[i].v * 0.1;
      }
  }
  printf("%.4f %.4f\n", p[n / 2].x, p[n - 1].v);
  free(p); free(start);
  return 0;
}
