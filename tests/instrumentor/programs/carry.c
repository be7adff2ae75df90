/* Decimal addition with a carry, as bc's _bc_shift_addsub: plain clang makes the digit's carry a select (no
 * branch on the data), and so must the twin without sites, once the markers that kept the optimiser from it are
 * gone (the test looks for a cmov or set instruction in both). Adds N ones to N nines and prints the sum of the
 * result's digits (N: every digit carries). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) static void add_digits(signed char* accp, const signed char* valp, int count) {
  int carry = 0;
  while (count--) {
    *accp += *valp-- + carry;
    if (*accp > 9) {
      carry = 1;
      *accp-- -= 10;
    } else {
      carry = 0;
      accp--;
    }
  }
  while (carry) {
    *accp += carry;
    if (*accp > 9)
      *accp-- -= 10;
    else
      carry = 0;
  }
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20;
  if (n < 1 || n > 1000) return 2;
  signed char acc[1002], val[1001];
  memset(acc, 9, sizeof acc);
  acc[0] = 0;
  memset(val, 1, sizeof val);
  add_digits(acc + n, val + n - 1, n);
  int digits = 0;
  for (int i = 0; i <= n; i++) digits += acc[i];
  printf("%d\n", digits);
  return 0;
}
