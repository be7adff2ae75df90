/* scalar-pairs in C: every kind of lvalue and of other operand, with values known in advance (pairs.expected). */
#include <stdio.h>
int limit = 4;
static unsigned long total;
struct pt { int x, y; };
int work(int n, int *arr) {
  int best = 0;
  int i;
  struct pt p = {0, 0};
  char *s = "x", *t = NULL;
  for (i = 0; i < n; i++) {
    int v = arr[i] * 2;
    best = v;
    p.x = v - 1;
    arr[i] += 1;
    total = total + (unsigned long)v;
  }
  t = s;
  if ((best = best + 1) > 3) best -= limit;
  return best + p.x + (t == s);
}
int main(void) { int a[3] = {1, 5, 2}; printf("%d %lu\n", work(3, a), total); return 0; }
