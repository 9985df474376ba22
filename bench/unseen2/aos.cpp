#include <cstdio>
#include <cstdlib>
#include <vector>
// Particles as an array of structs on the device: each field is a strided access (stride 48 bytes).
struct Particle { double x, y, z, vx, vy, vz; };
int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 400000, steps = argc > 2 ? std::atoi(argv[2]) : 30;
  std::vector<Particle> ps(n);
  for (int i = 0; i < n; i++) ps[i] = {i * 1e-3, 0, 0, 1.0, 0.5 * (i % 3), -0.25};
  Particle *p = ps.data();
  const double dt = 1e-3;
  #pragma omp target data map(tofrom: p[0:n])
  for (int s = 0; s < steps; s++) {
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) {
      p[i].vz -= 9.81 * dt;
      p[i].x += p[i].vx * dt;
      p[i].y += p[i].vy * dt;
      p[i].z += p[i].vz * dt;
    }
  }
  std::printf("p[7].z=%f\n", p[7].z);
  return 0;
}
