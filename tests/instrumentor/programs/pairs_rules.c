/* scalar-pairs leaves out pairs whose outcome is fixed at compile time, and bounds the sites of a function
   (pairs_rules.expected, built with -fsampler-compare-constants -fsampler-max-pairs=40: only bounded() has more
   candidates). Besides the pairs named below, each assignment that is not a declaration has its variable's old
   value, and 0 is a constant of every function. */
#include <stdio.h>
int g = 3;
extern int g; /* declared again: one variable, one site */

/* Constants outside the lvalue type's range compare the same way with every value: left out. */
unsigned range(unsigned char c, signed char s) {
  unsigned char d = c + 1;      /* c; 0, 1, 127, 128, 255 (the maximum: d == 255 can hold); not 256 and above */
  signed char t = s - 1;        /* s; 0, 1, 127; not 128 and above */
  unsigned u = d + 4294967295u; /* no other unsigned variable; every constant but 4294967296 */
  return u + (unsigned)t + (70000 + 256 + 4294967296ll + 127 + 128 + 255 > 0);
}

/* A constant value against a constant, a variable against its copy, a hidden variable: left out. */
int rules(int n) {
  int k = 7;       /* a constant: against n and g, no constant */
  int m = n;       /* a copy of n: against k, g and the constants, not n */
  m += 2;          /* not a copy: n, k, g and the constants */
  {
    int n = k * m; /* hides the parameter n: k, m, g and the constants */
    int g = n - 1; /* hides the global g: k, m, the inner n and the constants */
    m = g + n;     /* k, the inner n, the local g and the constants */
  }
  return m;
}

/* 10 assignments of 7 candidates each (a, g, 0, and the constants 3 written 3 times, 5 twice, 9 and 11 once), and
   x's old value in the 9 after its declaration. */
int bounded(int a) {
  int x = a * 3;
  x = x + 3;
  x = x - 5;
  x = x ^ 5;
  x = x | 9;
  x = x + 11;
  x = x + a;
  x = x - a;
  x = x + g;
  x = x * 3;
  return x;
}

int main(void) {
  printf("%u %d %d\n", range(200, -100), rules(4), bounded(2));
  return 0;
}
