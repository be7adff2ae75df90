/* The workload of sample_cost.sh: a loop of the kinds of sites sampler-cc places by default (branches, returns,
 * function entries, scalar-pairs), in a few instructions each, so that the cost of a sample is most of what
 * sampling adds. A linear congruential generator stands in for data. */
#include <stdio.h>
#include <stdlib.h>

static unsigned state = 1;

static int next_value(void) {
  state = state * 1103515245u + 12345u;
  return (int)((state >> 16) & 0x7fff);
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  long big = 0, small = 0;
  int last = 0;
  for (long i = 0; i < n; ++i) {
    int v = next_value();
    if (v > 16000)
      big++;
    else
      small++;
    last = v;
  }
  printf("%ld %ld %d\n", big, small, last);
  return 0;
}
