/* The device fills a buffer; the host copies back only the part it needs and then scans the buffer
 * until a sentinel, stopping there (`break`). The loads of the scan are appended inline to their run;
 * the sentinel lies past the copied part, so the scan reads a few elements the host never got back. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048, stop = n - 40, copied = n - 48;
  int *buf = malloc(n * sizeof(int)), cnt = 0;
  for (int i = 0; i < n; i++) buf[i] = 0;
#pragma omp target enter data map(to: buf[0:n])
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++) buf[i] = i == stop ? -1 : i;
#pragma omp target update from(buf[0:copied])
  for (int i = 0; i < n; i++) {
    if (buf[i] < 0) /* expect use-of-stale-data buf */
      break;
    cnt++;
  }
#pragma omp target exit data map(delete: buf[0:n])
  printf("%d\n", cnt);
  free(buf);
  return 0;
}
