// An inline function with a loop, in both units of the twins test program: each unit emits it, with its twin
// without sites and its code with sites, in its comdat group; the linker keeps one group.
inline int count_odd(const int* values, int n) {
  int odd = 0;
  for (int i = 0; i < n; i++)
    if (values[i] % 2) odd++;
  return odd;
}
int odd_in_squares(int n);
