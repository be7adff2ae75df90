/* A header of the test program: its sites name this file. */
static inline int clamp(int v, int low, int high) {
  if (v < low) return low;
  return v > high ? high : v;
}
