/* Sampling plans (tests/instrumentor/plan_test.sh, case loops): an innermost loop whose trips SCEV counts, with
 * sites in it and after it, entered once a row: under a plan its copy for plans runs wherever the countdown is
 * above the loop's weight, and the sites after it sample from the countdown the copy left (docs/decisions.md,
 * "A loop's copy for plans"). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long row(const long* a, int n, long bias) {
  long s = 0;
  for (int i = 0; i < n; ++i) {
    if (a[i] > bias) s += a[i];
    else s -= 1;
  }
  if (s > bias) s -= bias;
  return s;
}

int main(int argc, char** argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 1000;
  long a[16];
  for (int i = 0; i < 16; ++i) a[i] = (i * 37) % 11 - 5;
  long total = 0;
  for (int r = 0; r < rows; ++r) total += row(a, 8 + r % 8, r % 5 - 2);
  printf("%ld\n", total);
  return 0;
}
