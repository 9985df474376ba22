/* Particles as an array of 48-byte structs on the device: every field access is a strided record of
 * stride 48 (not a power of two), loads and stores of one struct at offsets on both sides of each
 * other. acc[5].az is never written on the device, so the kick reads it uninitialised. */
#include <stdio.h>
#include <stdlib.h>
struct particle { double x, y, z, vx, vy, vz; };
struct accel { double ax, ay, az; };
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64, steps = argc > 2 ? atoi(argv[2]) : 2;
  struct particle *p = malloc(n * sizeof *p);
  struct accel *acc = malloc(n * sizeof *acc);
  for (int i = 0; i < n; i++) {
    p[i].x = i * 1e-3; p[i].y = 0; p[i].z = 0;
    p[i].vx = 1.0; p[i].vy = 0.5 * (i % 3); p[i].vz = -0.25;
  }
  const double dt = 1e-3;
#pragma omp target data map(tofrom: p[0:n]) map(alloc: acc[0:n])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) { acc[i].ax = 0.0; acc[i].ay = 0.1 * (i % 2); }
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) if (i != 5) acc[i].az = -9.81;
    for (int s = 0; s < steps; s++) {
#pragma omp target teams distribute parallel for
      for (int i = 0; i < n; i++) {
        p[i].vx += acc[i].ax * dt;
        p[i].vy += acc[i].ay * dt;
        p[i].vz += acc[i].az * dt; /* expect use-of-uninitialized-memory acc */
        p[i].x += p[i].vx * dt;
        p[i].y += p[i].vy * dt;
        p[i].z += p[i].vz * dt;
      }
    }
  }
  printf("%.6f %.6f %.6f\n", p[7].x, p[7].y, p[7].z);
  free(p); free(acc);
  return 0;
}
