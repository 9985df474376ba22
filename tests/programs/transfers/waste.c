/* Wasted data movement, one scenario per argument, each with a fixed counterpart ("<name>-fixed").
 * The transfers checker must name the kind, the variable and the construct line of each buggy one
 * and find nothing in the fixed ones. */
#include <stdio.h>
#include <string.h>
#define N 1024

static double a[N], b[N], tmp[N];

static void init(void) {
  for (int i = 0; i < N; i++) {
    a[i] = i;
    b[i] = 0.0;
  }
}

static double total(const double *x) {
  double s = 0.0;
  for (int i = 0; i < N; i++) s += x[i];
  return s;
}

/* duplicate-transfer: the update sends a again though the host has not changed it (fixed: no update) */
static double dup_update(int fixed) {
#pragma omp target enter data map(to: a[0:N]) map(alloc: b[0:N])
  if (!fixed) {
#pragma omp target update to(a[0:N])
  }
#pragma omp target
  for (int i = 0; i < N; i++) b[i] = 2.0 * a[i];
#pragma omp target exit data map(release: a[0:N]) map(from: b[0:N])
  return total(b);
}

/* round-trip: a is mapped tofrom but the kernel only reads it */
static double tofrom_unwritten(int fixed) {
  if (fixed) {
#pragma omp target map(to: a[0:N]) map(from: b[0:N])
    for (int i = 0; i < N; i++) b[i] = a[i] + 1.0;
  } else {
#pragma omp target map(tofrom: a[0:N]) map(from: b[0:N])
    for (int i = 0; i < N; i++) b[i] = a[i] + 1.0;
  }
  return total(a) + total(b);
}

/* repeated-allocation and duplicate-transfer: the same arrays mapped again on every iteration */
static double loop_maps(int fixed) {
  if (fixed) {
#pragma omp target data map(to: a[0:N]) map(tofrom: b[0:N])
    for (int it = 0; it < 4; it++) {
#pragma omp target map(to: a[0:N]) map(tofrom: b[0:N])
      for (int i = 0; i < N; i++) b[i] += a[i];
    }
  } else {
    for (int it = 0; it < 4; it++) {
#pragma omp target map(to: a[0:N]) map(tofrom: b[0:N])
      for (int i = 0; i < N; i++) b[i] += a[i];
    }
  }
  return total(b);
}

/* unused-transfer: a is copied in but the kernel only writes it */
static double to_only_written(int fixed) {
  if (fixed) {
#pragma omp target map(from: a[0:N])
    for (int i = 0; i < N; i++) a[i] = 3.0 * i;
  } else {
#pragma omp target map(to: a[0:N])
    for (int i = 0; i < N; i++) a[i] = 3.0 * i;
#pragma omp target update from(a[0:N])
  }
  return total(a);
}

/* unused-allocation: tmp is mapped but no kernel touches it */
static double unused_alloc(int fixed) {
  if (fixed) {
#pragma omp target map(to: a[0:N]) map(from: b[0:N])
    for (int i = 0; i < N; i++) b[i] = a[i] * a[i];
  } else {
#pragma omp target map(to: a[0:N]) map(from: b[0:N]) map(alloc: tmp[0:N])
    for (int i = 0; i < N; i++) b[i] = a[i] * a[i];
  }
  return total(b);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *name = argv[1];
  size_t len = strlen(name);
  int fixed = len > 6 && strcmp(name + len - 6, "-fixed") == 0;
  init();
  double r;
  if (!strncmp(name, "dup-update", 10)) r = dup_update(fixed);
  else if (!strncmp(name, "tofrom-unwritten", 16)) r = tofrom_unwritten(fixed);
  else if (!strncmp(name, "loop-maps", 9)) r = loop_maps(fixed);
  else if (!strncmp(name, "to-only-written", 15)) r = to_only_written(fixed);
  else if (!strncmp(name, "unused-alloc", 12)) r = unused_alloc(fixed);
  else return 2;
  printf("%s %.1f\n", name, r);
  return 0;
}
