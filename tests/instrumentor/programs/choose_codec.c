/* A "hot, trusted codec": the function the choose tests leave out by name is codec_encode. */
#include "choose_codec.h"

static int key;

void codec_init(int seed) { key = seed > 0 ? seed * 7 : 1; }

int codec_encode(int value) {
  int mixed = value ^ key;
  if (mixed < 0) mixed = -mixed;
  return codec_mask(mixed);
}

int codec_decode(int value) {
  if (value == key) return 0;
  return value > 0 ? value ^ key : value;
}
