/* float-kinds, bounds, coverage and atoms in C, with values known in advance (schemes.expected). */
#include <stdio.h>
enum color { RED = -2, GREEN, BLUE };
int shared_count;
double shared_sum;
struct cell { long value; float weight; };

static int classify(int x) {
  switch (x) {
    case 0:
      return 0;
    case 1:
    case 2:
      return 1;
    default:
      break;
  }
  if (x < 0) goto negative;
  return 2;
negative:
  return -1;
}

double measure(struct cell *cells, int n) {
  double total = 0.0;
  float tiny = 1e-40f;
  long double wide = -1.0L;
  unsigned char byte = 250;
  short small = -3;
  enum color c = RED;
  for (int i = 0; i < n; ++i) {
    cells[i].weight = tiny * (float)i;
    total += cells[i].value;
    shared_count = shared_count + classify(i - 1);
    byte += 3;
    small--;
  }
  c = BLUE;
  wide /= 0.0L;
  char *cursor = (char *)cells;
  cursor++;
  shared_sum = total - total;
  return total + (wide < 0) + byte + small + c + (cursor != 0);
}

int main(void) {
  struct cell cells[3] = {{5, 0}, {-7, 0}, {1000000, 0}};
  double m = measure(cells, 3);
  printf("%.1f %d\n", m, shared_count);
  return 0;
}
