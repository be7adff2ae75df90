/* Sampling plans (tests/instrumentor/plan_test.sh): a loop whose branch in step() runs once an iteration, whose
 * arms() has paths of different weights in one region (two sites on one arm, one on the other), and whose rare()
 * runs once in 1000 iterations (cold code). */
#include <stdio.h>
#include <stdlib.h>

static int is_third(int i) { return i % 3 == 0; }

static long step(long total, int i) {
  if (i % 7 == 1) total -= 1;
  return total + (i & 1);
}

static long arms(long total, int i) {
  if (i % 5 < 2) {
    total += i;
    if (total & 4) total -= 3;
  } else {
    total -= 2;
  }
  return total;
}

static long rare(long total, int i) {
  if (total & 1) return total + i;
  return total - i;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  long total = 0;
  for (int i = 0; i < n; ++i) {
    int j = i * 5;
    if (is_third(i)) total += j;
    total = step(total, j);
    total = arms(total, i);
    if (i % 1000 == 999) total = rare(total, i);
  }
  printf("%ld\n", total);
  return 0;
}
