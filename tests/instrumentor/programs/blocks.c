/* Basic blocks clang makes differently at -O0 and at -O1+ (lifetime markers, and the cleanup blocks that end
 * locals' lifetimes on the way out of a scope): break, continue and the end of an `if` before a loop, out of
 * scopes with locals. coverage has the same sites and counts at every level, compiled as C and as C++. */
#include <stdio.h>
static int next(int i) { return i * 7 % 11 - 3; }
int main(void) {
  int sum = 0;
  for (int i = 0; i < 20; i++) {
    int x = next(i);
    if (x > 5) break;
    if (x < 0) continue;
    sum += x;
  }
  {
    int y = next(sum);
    if (y) sum++;
    while (sum < 100) {
      int z = next(sum);
      sum += z > 0 ? z : 1;
    }
  }
  printf("%d\n", sum);
  return 0;
}
