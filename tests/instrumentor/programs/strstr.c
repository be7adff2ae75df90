/* gnulib's test-strstr in small: a loop with a branch site around a call of the pure strstr on arguments the
 * loop never changes. LLVM hoists the call out of the loop in the plain build; the instrumented build must let
 * it (a store to the countdown in the loop once kept it inside: 10,000 calls on a megabyte instead of one). */
#include <stdio.h>
#include <string.h>
static char haystack[4096], needle[512];
int main(void) {
  memset(haystack, 'a', sizeof haystack - 1);
  memset(needle, 'a', sizeof needle - 2);
  needle[sizeof needle - 2] = 'b';
  int found = 0;
  for (int i = 0; i < 10000; i++)
    if (strstr(haystack, needle) != NULL) found++;
  printf("%d\n", found);
  return 0;
}
