/* A read whose index wraps (`v[r*nx + r % nx]`: not affine) beside an array of structs updated
 * field by field: alias analysis cannot tell the doubles of `v` from the structs' doubles, so the
 * structs' records went per access with the read. The remainder lies in [0, nx): over the loop the read
 * stays within a hull that a run-time check finds apart from the records, which stay hoisted (the read
 * per access). `v` is mapped one row short: the last row's read is outside its section. */
#include <stdio.h>
#include <stdlib.h>
struct pt { double x, w, acc; };
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200, nx = argc > 2 ? atoi(argv[2]) : 16;
  double *v = malloc(sizeof(double) * n * nx);
  struct pt *p = malloc(sizeof(struct pt) * n);
  for (int i = 0; i < n * nx; i++) v[i] = (i % 7) * 0.5;
  for (int i = 0; i < n; i++) { p[i].x = i; p[i].w = 1.0; p[i].acc = 0.0; }
#pragma omp target data map(to: v[0:(n - 1) * nx]) map(tofrom: p[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int r = 0; r < n; r++) {
      p[r].acc += p[r].w * v[(long)r * nx + (r % nx)]; /* expect buffer-overflow v */
      p[r].x += 0.5 * p[r].acc;
    }
  }
  printf("%.3f %.3f\n", p[n / 2].x, p[n - 2].acc);
  free(v); free(p);
  return 0;
}
