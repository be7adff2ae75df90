/* #pragma sampler_exclude_function: before the definition (early), after it in the original's spelling (late), a
 * wildcard (skip_*) and a name no function has. kept and main keep their sites. */
#include <stdio.h>

#pragma sampler_exclude_function(early)
#pragma sampler_exclude_function(no_such_function)

int early(int x) {
  int y = x;
  if (y < 0) y = -y;
  return y > 3 ? y - 3 : y;
}

int late(int x) {
  int y = x;
  if (y > 3) y = y - 3;
  return y;
}

int skip_this(int x) { return x > 1 ? x - 1 : x + 1; }

int kept(int x) { return x > 1 ? x - 1 : x + 1; }

#pragma sampler_exclude_function("late")
#pragma sampler_exclude_function(skip_*)

int main(void) {
  printf("%d %d %d %d\n", early(-7), late(9), skip_this(4), kept(5));
  return 0;
}
