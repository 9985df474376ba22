/* stdin/stdout/stderr and the exit status go through `trace record` untouched. */
#include <stdio.h>
int main(int argc, char **argv) {
  char line[128] = "";
  int v[4] = {1, 2, 3, 4};
  if (!fgets(line, sizeof line, stdin)) return 9;
#pragma omp target map(tofrom: v)
  for (int i = 0; i < 4; i++) v[i] *= 10;
  printf("out: %s", line);
  printf("args: %d %s v=%d\n", argc, argc > 1 ? argv[1] : "-", v[3]);
  fprintf(stderr, "err: done\n");
  return 3;
}
