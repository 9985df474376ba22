// A struct whose pointer member alone is mapped (`map(to: x.v[0:n])` maps the member and its
// pointee, not x.n): the kernel's implicit map of the whole struct finds it present and maps nothing
// more. x is 16-byte aligned, so libomptarget pads the member's device allocation back to x's start
// (8 bytes): reading x.n reads that padding, device memory nothing initialised (at 8 mod 16 there is
// no padding and the read is an overflow of x: tests/replay/test_vsm_struct_member.py). The sum over
// x.v is fine.
#include <stdio.h>
#include <stdlib.h>
typedef struct { int n; double *v; } vec_t;
int main(void) {
  int n = 100, seen = 0;
  vec_t x __attribute__((aligned(16))) = {n, malloc(sizeof(double) * 100)};
  double sum = 0;
  for (int i = 0; i < n; i++) x.v[i] = i * 0.5;
#pragma omp target enter data map(to: x.v[0:n])
#pragma omp target map(tofrom: sum, seen)
  {
    seen = x.n; /* expect use-of-uninitialized-memory x */
    for (int i = 0; i < n; i++) sum += x.v[i];
  }
#pragma omp target exit data map(delete: x.v[0:n])
  printf("%f %d\n", sum, seen > 0);
  free(x.v);
  return 0;
}
