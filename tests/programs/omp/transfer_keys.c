/* Transfers the tracer must tell apart (tests/tracer/test_transfer_keys.py): a `declare target`
 * global whose device copy comes with the image (its first transfer is associated once, aux 1), whole
 * mapped sections transferred by every kernel (their device copy is known: no association), and a
 * `target update` of a section in the middle of a mapped array (inside a known copy: none either). */
#include <stdio.h>
#define N 64

int table[8];
#pragma omp declare target(table)

int main(void) {
  int a[N], b[N];
  for (int i = 0; i < N; i++) { a[i] = i; b[i] = 0; }
  for (int i = 0; i < 8; i++) table[i] = i * i;
  #pragma omp target update to(table[0:8])
  for (int s = 0; s < 20; s++) {
    #pragma omp target teams distribute parallel for map(to: a[0:N]) map(tofrom: b[0:N])
    for (int i = 0; i < N; i++) b[i] += a[i] + table[i % 8];
  }
  #pragma omp target update to(table[0:8])
  #pragma omp target data map(tofrom: a[0:N])
  {
    for (int i = 16; i < 24; i++) a[i] = -i;
    #pragma omp target update to(a[16:8])
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < N; i++) a[i] += table[i % 8];
  }
  printf("%d %d\n", a[20], b[5]);
  return 0;
}
