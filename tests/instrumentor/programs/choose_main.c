/* Choosing what to instrument (the `choose` case of instrumentor_test.sh): a program of two files and a header,
 * whose functions the tests leave in or out by name, by file and by the environment's lists. */
#include <stdio.h>
#include <stdlib.h>

#include "choose_codec.h"

static int clamp(int x, int low, int high) { return x < low ? low : x > high ? high : x; }

int parse_number(const char* text) {
  int n = atoi(text);
  if (n < 0) n = -n;
  return clamp(n, 1, 1000);
}

int main(int argc, char** argv) {
  int n = parse_number(argc > 1 ? argv[1] : "37");
  codec_init(n);
  int sum = 0;
  for (int i = 0; i < n; i++) sum += codec_decode(codec_encode(i));
  printf("%d %d\n", n, sum);
  return 0;
}
