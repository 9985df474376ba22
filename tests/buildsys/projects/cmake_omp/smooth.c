#include "smooth.h"

/* Bug: `in` is only allocated on the device, never copied in (should be map(to: ...)). */
void scale(const double *in, double *out, int n, double f) {
#pragma omp target teams distribute parallel for map(alloc: in[0:n]) map(from: out[0:n])
  for (int i = 0; i < n; i++)
    out[i] = f * in[i];
}
