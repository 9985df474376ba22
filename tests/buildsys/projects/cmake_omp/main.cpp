#include <cstdio>
#include <vector>
#include "smooth.h"

int main() {
  const int n = 256;
  std::vector<double> in(n), out(n);
  for (int i = 0; i < n; i++) in[i] = i;
  scale(in.data(), out.data(), n, 2.0);
  double s = 0;
  for (int i = 0; i < n; i++) s += out[i];
  std::printf("done\n");
  return s < 0;
}
