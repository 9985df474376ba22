/* Seed 000 Fig. 2 with the paper's line numbers (#line): a stale read at line 5 and a
 * nondeterministic read at line 16. The nowait region maps `a` explicitly (a scalar would be
 * firstprivate by default since OpenMP 4.5); it is present, so the kernel writes the data
 * region's device copy. */
#include <stdio.h>
int main(void) {
#line 1
int a = 1;
#pragma omp target map(to: a)
  a += 1;
  // read stale data on the host
  printf("a = %d\n", a);

#pragma omp target data map(tofrom: a)
{
  #pragma omp target nowait map(tofrom: a)
  {
    a = 3;
  }
  a += 1;
}
// nondeterministic result of a
printf("a = %d\n", a);
#pragma omp taskwait
return 0;
}
