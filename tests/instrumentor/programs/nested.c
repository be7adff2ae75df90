/* Loops around loops, each with sites: lower.cpp checks the countdown once before the outer loop when SCEV bounds
 * its trips (exactly, or its symbolic maximum for a loop that may leave early) and gives each inner loop a constant
 * maximum of trips. `longest` is gzip's longest_match: a chain walked until a limit or a count runs out, or a long
 * enough match is found, around a comparison that leaves early but never runs past a fixed end. `blocks` sums a
 * counted loop of fixed inner loops. `unbounded`'s inner loop is bounded only by the range of an int (its
 * constant maximum times its sites is above what a guard checks), so its outer loop keeps its checks. The test compares the reports with those of the per-site check: the same sites must sample.
 * Prints a checksum of the work. */
#include <stdio.h>
#include <stdlib.h>

#define WINDOW 4096
#define MAX_MATCH 64

static unsigned char window[WINDOW + MAX_MATCH];
static unsigned short chain[WINDOW];

__attribute__((noinline)) static int longest(unsigned start, unsigned chain_length, unsigned limit) {
  unsigned char* scan = window + start;
  unsigned char* strend = window + start + MAX_MATCH;
  unsigned char* match;
  int best = 2;
  unsigned current = chain[start];
  do {
    match = window + current;
    if (match[best] != scan[best] || *match != *scan) continue;
    int length = 0;
    do {
      length++;
    } while (*++scan == *++match && *++scan == *++match && scan < strend);
    scan = strend - MAX_MATCH;
    if (length > best) {
      best = length;
      if (length >= 20) break;
    }
  } while ((current = chain[current]) > limit && --chain_length != 0);
  return best;
}

__attribute__((noinline)) static long blocks(const unsigned char* bytes, int rows) {
  long total = 0;
  for (int r = 0; r < rows; r++) {
    int odd = 0;
    for (int c = 0; c < 16; c++)
      if (bytes[r * 16 + c] & 1) odd = odd + 1;
    total += odd;
  }
  return total;
}

__attribute__((noinline)) static long unbounded(const int* a, int rows, int columns) {
  long total = 0;
  for (int r = 0; r < rows; r++) {
    int c = 0;
    while (c < columns && a[c] != r) c = c + 1;
    total += c;
  }
  return total;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  if (n < 1 || n > 100000) return 2;
  unsigned seed = 11;
  for (int i = 0; i < WINDOW + MAX_MATCH; i++) {
    seed = seed * 1103515245u + 12345u;
    window[i] = (unsigned char)((seed >> 28) & 3);  // few letters: long matches
  }
  for (int i = 0; i < WINDOW; i++) {
    seed = seed * 1103515245u + 12345u;
    chain[i] = (unsigned short)(i > 0 ? (seed >> 16) % (unsigned)i : 0);
  }
  int* a = malloc(sizeof(int) * (size_t)n);
  if (!a) return 3;
  for (int i = 0; i < n; i++) a[i] = (int)((i * 7u) % (unsigned)n);
  long check = 0;
  for (int round = 1; round <= 20; round++) {
    for (int s = WINDOW / 2; s < WINDOW / 2 + n / 10 + 1; s++) check += longest((unsigned)s, (unsigned)round * 8, 16);
    check += blocks(window, n / round < WINDOW / 16 ? n / round : WINDOW / 16);
    check += unbounded(a, round, n);
  }
  printf("%ld\n", check);
  free(a);
  return 0;
}
