/* Innermost loops whose trip counts SCEV computes, each with sites: lower.cpp checks the countdown once before such
 * a loop (against its trip count times its sites per iteration) and runs a copy without checks when no sample is
 * in reach. A counted loop, bc's carry loop (both arms assign), a loop whose arms pass different numbers of sites,
 * a 64-bit count, a value made in the loop and used after it, an inner loop run many times, and a loop that may
 * leave early (only a bound on its trips), which keeps its checks. The test compares the reports with those of the
 * per-site check at one seed: the same sites must sample. Prints a checksum of the work. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static int sum_to(int n) {
  int sum = 0;
  for (int i = 0; i < n; i++) sum += i;
  return sum;
}

static void add_digits(signed char* accp, const signed char* valp, int count) {
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
}

static int uneven(const int* a, int n) {
  int odd = 0, big = 0;
  for (int i = 0; i < n; i++) {
    if (a[i] & 1) {
      odd = odd + 1;
      big = a[i] > 50 ? big + 1 : big;
    }
  }
  return odd * 1000 + big;
}

static int find(const int* a, int n, int wanted) {
  int i;
  for (i = 0; i < n; i++)
    if (a[i] == wanted) break;
  return i;
}

static size_t count_zeros(const unsigned char* bytes, size_t length) {
  size_t zeros = 0;
  for (size_t i = 0; i < length; i++) zeros += bytes[i] == 0;
  return zeros;
}

static int last_above(const int* a, int n, int limit) {
  int last = -1, seen = 0;
  for (int i = 0; i < n; i++) {
    seen = a[i];
    if (seen > limit) last = i;
  }
  return last + seen;
}

static long matrix(const int* a, int rows, int columns) {
  long total = 0;
  for (int r = 0; r < rows; r++) {
    long row = 0;
    for (int c = 0; c < columns; c++) row += a[r * columns + c] > 10 ? a[r * columns + c] : 1;
    total += row;
  }
  return total;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  if (n < 1 || n > 100000) return 2;
  int* a = malloc(sizeof(int) * (size_t)n);
  signed char* acc = malloc((size_t)n + 1);
  signed char* val = malloc((size_t)n);
  unsigned char* bytes = malloc((size_t)n);
  if (!a || !acc || !val || !bytes) return 3;
  unsigned seed = 7;
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    a[i] = (int)(seed >> 25);
    bytes[i] = (unsigned char)(seed >> 29);
    acc[i] = (signed char)(seed >> 28) % 10;
    val[i] = (signed char)(seed >> 27) % 10;
  }
  acc[n] = 0;
  long check = 0;
  for (int round = 1; round <= 20; round++) {
    check += sum_to(n / round);
    add_digits(acc + n, val + n - 1, n / round);
    check += uneven(a, n / round);
    check += find(a, n, 100 + round);
    check += (long)count_zeros(bytes, (size_t)(n / round));
    check += last_above(a, n / round, 60);
    check += matrix(a, round, n / (round + 1));
  }
  for (int i = 0; i <= n; i++) check += acc[i];
  printf("%ld\n", check);
  free(a);
  free(acc);
  free(val);
  free(bytes);
  return 0;
}
