/* Sampling off, a function runs its twin without sites: the thread's countdown does not move while it runs.
 * With sampling on, the same call passes its sites one by one: 2 per iteration (the loop's test and the if's)
 * and the loop's last test. Prints the countdown before the call and how far the call moved it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
extern __thread int64_t sampler_countdown;
__attribute__((noinline)) static int sum(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    if (i % 3) s += i;
  return s;
}
/* Its twin calls sum's twin directly (the test reads the assembly). */
__attribute__((noinline)) static int sums(int n) {
  int s = 0;
  for (int i = 0; i < n; i += 100) s += sum(i);
  return s;
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  int first = sum(1); /* the thread's first site: sampling off, the countdown goes out of reach */
  int64_t before = sampler_countdown;
  int total = sum(n);
  int64_t moved = before - sampler_countdown;
  if (argc > 2) printf("%d\n", sums(n));
  printf("%d %s %lld\n", first + total, before >= ((int64_t)1 << 61) ? "out-of-reach" : "in-reach", (long long)moved);
  return 0;
}
