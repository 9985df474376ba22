#include <stdio.h>
int main(void) {
  int a = 1;
#pragma omp target map(to: a)
  a += 1;
  printf("a = %d\n", a); /* line 6: stale (a is 1 on the host) */
#pragma omp target data map(tofrom: a)
  {
#pragma omp target nowait map(tofrom: a)
    {
      a = 3;
    }
    a += 1; /* line 13: races with the nowait kernel's copy back */
  }
#pragma omp taskwait
  return a > 0 ? 0 : 1;
}
