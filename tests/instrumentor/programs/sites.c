/* The C program of tests/instrumentor: every kind of site, run with known inputs, so that at
 * SAMPLER_SPARSITY=1 each counter is known exactly (sites.expected). `sites crash` dies of SIGSEGV. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"

#define IS_EVEN(n) ((n) % 2 == 0)

static int sign_of(int v) { return v < 0 ? -1 : v > 0; }
static const char* find(const char* s, char c) { return strchr(s, c); }
static bool small(unsigned v) { return v < 10; }
static unsigned twice(unsigned v) { return 2 * v; }
static void nothing(void) {}

static int crash_here(int* volatile p) { return *p; }

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "crash") == 0) return crash_here(NULL);
  int (*op)(int) = sign_of;
  int evens = 0, total = 0;
  for (int i = -2; i < 3; i++) {
    total += op(i);
    if (IS_EVEN(i)) evens++;
  }
  int n = 3;
  while (n > 0) n--;
  do {
    n++;
  } while (n < 2);
  if (find("abc", 'b') && !find("abc", 'z')) total += 10;
  if (small(twice(3)) || small(twice(100))) total += 100;
  nothing();
  total += clamp(50, 0, 20) + clamp(-5, 0, 20);
  printf("%d %d %d\n", evens, total, n);
  return 0;
}
