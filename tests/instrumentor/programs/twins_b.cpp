// The twins test program's second unit (twins_a.cpp).
#include <vector>

#include "twins.h"

int odd_in_squares(int n) {
  std::vector<int> squares(n);
  for (int i = 0; i < n; i++) squares[i] = i * i;
  return count_odd(squares.data(), n);
}
