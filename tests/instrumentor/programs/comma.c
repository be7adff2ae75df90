/* The comma operator whose value is unused: both `i++` and `j--` of a for's increment are assignments
 * (scalar-pairs, bounds), and so are both operands of a comma cast to void (comma.expected). */
#include <stdio.h>
int main(void) {
  int i = 0, j = 10, s = 0;
  for (; i < j; i++, j--) s += i * j;
  (void)(s++, j++);
  printf("%d %d %d\n", i, j, s);
  return 0;
}
