/* Sampling plans (tests/instrumentor/plan_test.sh): a loop whose branch in step() runs once an iteration. */
#include <stdio.h>
#include <stdlib.h>

static int is_third(int i) { return i % 3 == 0; }

static long step(long total, int i) {
  if (i % 7 == 1) total -= 1;
  return total + (i & 1);
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  long total = 0;
  for (int i = 0; i < n; ++i) {
    int j = i * 5;
    if (is_third(i)) total += j;
    total = step(total, j);
  }
  printf("%ld\n", total);
  return 0;
}
