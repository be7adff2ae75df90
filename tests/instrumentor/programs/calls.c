/* A loop that calls a function with sites of its own, between sites of the caller: the countdown the callee's
 * sites leave must be the one the caller's next sites read (the lowering must not let the optimiser believe the
 * callee leaves it alone). */
#include <stdio.h>
__attribute__((noinline)) static int step(int x) { return x % 4 > 1 ? x - 1 : x + 2; }
int main(int argc, char** argv) {
  int sum = argc;
  for (int i = 0; i < 2000; i++) {
    if (i % 3 == 0) sum += step(i);
    if (sum > 1000) sum -= 999;
    if (sum % 7 == 3) sum++;
  }
  printf("%d\n", sum);
  return 0;
}
