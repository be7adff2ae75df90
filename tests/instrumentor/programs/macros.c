/* Branches in code from macro expansions: each site's text is the predicate as the programmer wrote it, not what
 * the macros expand to (macros.expected): glibc's isalpha(c), a macro of the program's own, and a macro's argument
 * (what the hand-instrumentation macro SAMPLER_BRANCH becomes when compiled out). The call isalpha hides is
 * named by its callee, __ctype_b_loc. */
#include <ctype.h>
#include <stdio.h>
#define LIMIT 3
#define TOO_LONG(n) ((n) > LIMIT)
#define BRANCH(name, condition) ((condition) ? 1 : 0)
int main(void) {
  const char* text = "ab1 cdefg hi";
  int letters = 0, long_words = 0, length = 0;
  for (const char* p = text; *p; ++p) {
    if (isalpha((unsigned char)*p))
      ++length;
    else
      length = 0;
    if (BRANCH(letter, isalpha((unsigned char)*p))) ++letters;
    if (TOO_LONG(length)) ++long_words;
    if (BRANCH(too_long, length > LIMIT)) ++long_words;
  }
  printf("%d %d\n", letters, long_words);
  return 0;
}
