/* omp_target_memcpy out of mapped variables' device copies (omp_get_mapped_ptr, use_device_ptr):
 * a's device copy is stale (the host rewrote a after the copy-in), b's was never initialised. */
#include <omp.h>
#include <stdio.h>
#define N 32
int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  float a[N], b[N], out[N];
  float *pb = b;
  for (int i = 0; i < N; i++) a[i] = 1.0f;
#pragma omp target enter data map(to: a[0:N]) map(alloc: b[0:N])
  for (int i = 0; i < N; i++) a[i] = 2.0f;
  omp_target_memcpy(out, omp_get_mapped_ptr(a, dev), sizeof a, 0, 0, host, dev); /* expect use-of-stale-data a */
#pragma omp target data use_device_ptr(pb)
  omp_target_memcpy(out, pb, sizeof b, 0, 0, host, dev); /* expect use-of-uninitialized-memory b */
#pragma omp target exit data map(delete: a[0:N], b[0:N])
  printf("%g\n", out[0]);
  return 0;
}
