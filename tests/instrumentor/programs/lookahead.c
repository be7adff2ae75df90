/* A loop whose body is two regions, as gzip's longest_match: the body, and the condition that `continue` jumps to
   after an inner loop made it a region of its own. The region check of the body covers the condition too. */
#include <stdio.h>
#include <stdlib.h>

static unsigned short chain[4096];
static unsigned char text[4096 + 64];

static int longest(unsigned start, unsigned limit, int tries) {
  int best = 0;
  unsigned at = start;
  do {
    if (text[at] != text[start]) continue;
    int len = 0;
    while (len < 32 && text[at + len] == text[start + len]) len++;
    if (len > best) best = len;
  } while ((at = chain[at]) > limit && --tries != 0);
  return best;
}

static unsigned next(unsigned* seed) { return *seed = *seed * 1103515245u + 12345u; }

int main(int argc, char** argv) {
  unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  for (int i = 0; i < 4096 + 64; i++) text[i] = (unsigned char)(next(&seed) >> 28);
  /* Each position chains to one up to 8 before it, as gzip's hash chains go back in the window. */
  for (int i = 1; i < 4096; i++) chain[i] = (unsigned short)(i - 1 - (int)(next(&seed) >> 29) % (i < 8 ? 1 : 8));
  long total = 0;
  for (unsigned s = 4095; s > 64; s -= 7) total += longest(s, 8, 64);
  printf("%ld\n", total);
  return 0;
}
