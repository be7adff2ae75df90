/* Structs passed by value in memory (byval): minus() gets b on the stack once the six integer registers run out,
 * as jq's functions get its 16-byte jv; count() gets a 44-byte struct, always in memory. Both have loops, so
 * sampler-cc would give them twins; their results must be those of plain clang, sampling off and on. */
#include <stdio.h>
#include <string.h>

typedef struct {
  long kind;
  double value;
} value16;

typedef struct {
  char text[40];
  int extra;
} text44;

__attribute__((noinline)) long minus(void* self, value16 input, value16 a, value16 b) {
  long total = 0;
  for (long i = 0; i < a.kind; ++i) total += i;
  return total + (long)(a.value - b.value) + input.kind + (self != 0);
}

__attribute__((noinline)) int count(text44 t, int c) {
  int n = 0;
  for (size_t i = 0; i < strlen(t.text); ++i) n += t.text[i] == c;
  return n + t.extra;
}

int main(int argc, char** argv) {
  value16 input = {argc, 0}, a = {10, 7.5}, b = {3, 2.5};
  text44 t;
  memset(&t, 0, sizeof t);
  strncpy(t.text, argc > 1 ? argv[1] : "banana", sizeof t.text - 1);
  t.extra = 100;
  printf("%ld %d\n", minus(&input, input, a, b), count(t, 'a'));
  return 0;
}
