/* Sampling plans (tests/instrumentor/plan_test.sh, case off): three functions with loops, so with twins, each
 * calling where() from its loop; where() keeps the return addresses it sees as offsets from the function's symbol
 * (its dispatch), which tell the twin from the code with sites: the program prints them per function. outer()'s
 * twin calls leaf()'s twin directly, so a plan may turn outer() off only with leaf() (docs/decisions.md, "A plan's
 * functions without samples run their twins"); lone() calls no function with a twin. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kFunctions = 3, kMostSeen = 16 };
static const char* const names[kFunctions] = {"leaf", "outer", "lone"};
static long seen[kFunctions][kMostSeen];
static int seen_count[kFunctions];

__attribute__((noinline)) void where(int who, void (*function)(void)) {
  long offset = (long)((uintptr_t)__builtin_return_address(0) - (uintptr_t)function);
  for (int i = 0; i < seen_count[who]; ++i)
    if (seen[who][i] == offset) return;
  if (seen_count[who] < kMostSeen) seen[who][seen_count[who]++] = offset;
}

typedef void (*any_function)(void);

__attribute__((noinline)) long leaf(int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 3 == 0) s += i;
    else s -= 1;
    where(0, (any_function)leaf);
  }
  return s;
}

__attribute__((noinline)) long outer(int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 5 == 0) s += leaf(i % 7);
    where(1, (any_function)outer);
  }
  return s;
}

__attribute__((noinline)) long lone(int n) {
  long s = 1;
  for (int i = 0; i < n; ++i) {
    if (s > 1000) s /= 3;
    else s = s * 2 + i;
    where(2, (any_function)lone);
  }
  return s;
}

static int by_value(const void* a, const void* b) {
  long x = *(const long*)a, y = *(const long*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  long total = outer(n) + lone(n);
  printf("total %ld\n", total);
  for (int f = 0; f < kFunctions; ++f) {
    qsort(seen[f], (size_t)seen_count[f], sizeof seen[f][0], by_value);
    printf("%s", names[f]);
    for (int i = 0; i < seen_count[f]; ++i) printf(" %ld", seen[f][i]);
    printf("\n");
  }
  return 0;
}
