/* scalar-pairs as the original defined it (pairs_original.expected): at each assignment to a named variable, the
   new value against 0 (NULL for a pointer), the variable's old value, and the parameters, certainly initialised
   locals and earlier globals of its type. Assignments into a field, an array element or through a pointer have
   no pairs unless asked for (instrumentor_test.sh checks which options give them). */
#include <stdio.h>
long early = 0; /* long: the int variables below are not compared with these */
long counter = 0;
int slots[4];
struct box { int n; };

void incr(void) { ++counter; } /* 0, early, counter's old value */
long late = 0;
void decr(void) { --counter; } /* 0, early, counter's old value, late */

int count_to(int n) {
  int i, sum = 0;
  for (i = 0; i < n; ++i) /* i = 0: n, sum (0 is the value; i has none yet); ++i: n, i's old value, sum, 0 */
    sum += i;             /* n, i, sum's old value, 0 */
  return sum;
}

const char *skip(const char *s) {
  const char *p = s;    /* a copy of s: NULL only */
  while (*p == ' ') p++; /* s, p's old value, NULL */
  return p;
}

/* Locals are compared only where they are certainly initialised. */
int maybe(int c) {
  int x;
  if (c) x = 1; /* c (no 0: the value is a constant) */
  x = c + 2;    /* x may have no value yet: c, 0 */
  x += c;       /* c, x's old value, 0 */
  switch (c) {
    int y = 5; /* never run: y has no value at `case 1` */
  case 1:
    y = c; /* a copy of c: x and 0, and no old value */
    return x + y;
  }
  return x;
}

/* Into a field, an array element, through a pointer: none by default. */
int store(struct box *b, int *where, int v) {
  struct box local = {0};
  local.n = v;
  slots[v] = v;
  *where = v;
  b->n = v;
  return local.n + b->n + slots[v];
}

int main(void) {
  struct box b = {0};
  int where = 0;
  incr();
  incr();
  decr();
  printf("%ld %d %s %d %d %d %d\n", counter, count_to(4), skip("  x"), maybe(1), maybe(0), store(&b, &where, 2),
         where);
  return (int)(early + late);
}
