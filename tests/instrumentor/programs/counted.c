/* Leaf functions whose loops have a small constant maximum of trips, so that their counted copies
 * (lower_counted.cpp) run at the test's sparsities: in each loop the blocks every iteration passes are counted by
 * its iterations (by its induction variable where it leaves, or at its latch) and, where it leaves before the
 * latch, those the last iteration passed. `chain` is gzip's longest_match (a walk that continues at its first
 * comparison and leaves on a long match, around an inner loop), `compare` bzip2's mainGtU (exits in the middle of
 * each iteration, arms that wrap), `digits` a loop whose arms pass different numbers of sites, `classify` a switch
 * whose cases leave the loop for one block (one exit edge for three cases); their copies' bodies are their
 * dispatches' own (chain's at -O2, where its inner loop is unrolled). `runs` has a loop around a loop, and `spread`
 * calls memset: their copies stay functions of their own. The test compares the reports with those of the per-site check: the same sites must sample. Prints a
 * checksum of the work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE 4096

static unsigned char data[SIZE + 64];

__attribute__((noinline)) static int chain(unsigned start, unsigned limit) {
  unsigned char* scan = data + start;
  int best = 1;
  unsigned current = (start * 7) & (SIZE - 1);
  unsigned step = 0;
  do {
    unsigned char* match = data + current;
    if (match[best] != scan[best] || *match != *scan) continue;
    int length = 0;
    while (length < 8 && match[length] == scan[length]) length++;
    if (length > best) {
      best = length;
      if (length >= 7) break;
    }
  } while ((current = (current * 13 + 5) & (SIZE - 1)) > limit && ++step < 6);
  return best;
}

__attribute__((noinline)) static int compare(unsigned i1, unsigned i2, unsigned n) {
  unsigned k = 0;
  do {
    unsigned char c1 = data[i1], c2 = data[i2];
    if (c1 != c2) return c1 > c2;
    i1++;
    i2++;
    c1 = data[i1];
    c2 = data[i2];
    if (c1 != c2) return c1 > c2;
    i1++;
    i2++;
    if (i1 >= n) i1 -= n;
    if (i2 >= n) i2 -= n;
  } while (++k < 12);
  return 0;
}

__attribute__((noinline)) static int digits(const unsigned char* a, unsigned char len) {
  int carry = 0, sum = 0;
  for (unsigned char i = 0; i < len && i < 10; i++) {
    int d = a[i] + carry;
    if (d >= 3) {
      d -= 3;
      carry = 1;
    } else {
      carry = 0;
    }
    sum += d;
  }
  return sum;
}

__attribute__((noinline)) static int classify(const unsigned char* a) {
  int odd = 0;
  for (unsigned k = 0; k < 16; k++) {
    switch (a[k] * 3 + a[k + 1]) {
      case 0:
      case 4:
      case 7:
        return k + odd;
      case 1:
        odd += 2;
        break;
      default:
        odd++;
    }
  }
  return -1;
}

__attribute__((noinline)) static int runs(const unsigned char* a, unsigned len) {
  int count = 0;
  for (unsigned i = 0; i < (len & 15); i++) {
    unsigned j = 0;
    while (j < (a[i] & 3) && a[i + j + 1] != 0) j++;
    if (j > 1) count += j;
  }
  return count;
}

__attribute__((noinline)) static int spread(const unsigned char* a, unsigned len) {
  unsigned char counts[64];
  memset(counts, 0, sizeof counts);
  int most = 0;
  for (unsigned i = 0; i < (len & 31); i++)
    if (++counts[a[i] + (i & 15) * 3] > most) most = counts[a[i] + (i & 15) * 3];
  return most;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  unsigned seed = 12345;
  for (unsigned i = 0; i < sizeof data; i++) {
    seed = seed * 1103515245 + 12345;
    data[i] = (seed >> 16) % 3;
  }
  long sum = 0;
  for (int round = 0; round < n * 10; round++) {
    unsigned at = (unsigned)round * 2654435761u % SIZE;
    sum += chain(at, (unsigned)round % 512);
    sum += compare(at, (at * 5 + 1) % SIZE, SIZE) * 3;
    sum += digits(data + at, (unsigned char)(round % 13));
    sum += classify(data + at);
    sum += runs(data + at, (unsigned)round);
    sum += spread(data + at, (unsigned)round * 7);
  }
  printf("%ld\n", sum);
  return 0;
}
