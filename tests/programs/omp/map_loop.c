/* Maps a fresh heap block in every iteration: more live-then-dead device copies than the
 * tracer's tables have slots, so they must be reused. */
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  long s = 0;
  for (int k = 0; k < 5000; k++) {
    int *b = malloc(64 * sizeof(int));
    for (int i = 0; i < 64; i++) b[i] = k;
#pragma omp target map(tofrom: b[0:64])
    b[1] += 1;
    s += b[1];
    free(b);
  }
  printf("%ld\n", s);
  return 0;
}
