// The twins test program (with twins_b.cpp): prints how many odd numbers 0..n-1 and their squares hold.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "twins.h"

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 100;
  std::vector<int> values(n);
  for (int i = 0; i < n; i++) values[i] = i;
  std::printf("%d %d\n", count_odd(values.data(), n), odd_in_squares(n));
  return 0;
}
