/* Sampling plans (tests/instrumentor/plan_test.sh, case nests): a loop around a loop, as gzip's longest_match (a
 * chain of candidates, each compared up to a constant maximum of bytes), entered once a row: under a plan its copy
 * for plans runs while the countdown is above one iteration's weight, and the checked nest runs the iterations
 * left (docs/decisions.md, "A nest's copy for plans"). */
#include <stdio.h>
#include <stdlib.h>

static unsigned char window[512];

__attribute__((noinline)) static int longest(int start, int chain) {
  int best = 0;
  int cur = (start * 13 + 1) % 256;
  do {
    const unsigned char* a = window + cur;
    const unsigned char* b = window + start;
    int len = 0;
    do {
      if (a[len] != b[len]) break;
    } while (++len < 64);
    if (len > best) best = len;
    cur = (cur * 7 + 3) % 256;
  } while (--chain != 0);
  return best;
}

int main(int argc, char** argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 1000;
  for (int i = 0; i < 512; ++i) window[i] = (unsigned char)((i * i) % 3);
  long total = 0;
  for (int r = 0; r < rows; ++r) total += longest(r % 200, 1 + r % 32);
  printf("%ld\n", total);
  return 0;
}
