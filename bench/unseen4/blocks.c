// Device ragged blocks described by an array of structs: loop bounds read from struct fields
// (`b->off`, `b->len`, `g.nx`), a block's scale read through a pointer each row, and a
// 3-field array of structs (stride 24) updated from the block data.
#include <stdio.h>
#include <stdlib.h>
struct blk { int off, len; double scale; };
struct grid { int nx, nb; };
struct pt { double x, w, acc; };
int main(int argc, char **argv) {
  int nb = argc > 1 ? atoi(argv[1]) : 4000, iters = argc > 2 ? atoi(argv[2]) : 20;
  struct grid g = {32, nb};
  struct blk *bl = malloc(sizeof(struct blk) * nb);
  int tot = 0;
  for (int b = 0; b < nb; b++) { bl[b].off = tot; bl[b].len = 10 + (b * 37) % 40; bl[b].scale = 1.0 + (b % 5) * 0.001; tot += bl[b].len; }
  double *v = malloc(sizeof(double) * tot * g.nx);
  struct pt *p = malloc(sizeof(struct pt) * tot);
  for (long i = 0; i < (long)tot * g.nx; i++) v[i] = (i % 17) * 0.01;
  for (int i = 0; i < tot; i++) { p[i].x = i * 0.001; p[i].w = 1.0; p[i].acc = 0; }
#pragma omp target data map(to: bl[0:nb]) map(tofrom: v[0:tot*g.nx], p[0:tot])
  for (int t = 0; t < iters; t++) {
#pragma omp target teams distribute parallel for firstprivate(g)
    for (int b = 0; b < g.nb; b++) {
      const struct blk *bk = &bl[b];
      for (int r = 0; r < bk->len; r++) {
        double *row = v + (long)(bk->off + r) * g.nx;
        for (int k = 0; k < g.nx; k++) row[k] = row[k] * bk->scale + 0.001;
      }
    }
#pragma omp target teams distribute parallel for firstprivate(g)
    for (int b = 0; b < g.nb; b++) {
      const struct blk *bk = &bl[b];
      for (int r = bk->off; r < bk->off + bk->len; r++) {
        p[r].acc += p[r].w * v[(long)r * g.nx + (r % g.nx)];
        p[r].x += 0.5 * p[r].acc;
      }
    }
  }
  printf("blocks %.6e %.6e\n", v[(long)tot * g.nx / 2], p[tot / 2].x);
  return 0;
}
