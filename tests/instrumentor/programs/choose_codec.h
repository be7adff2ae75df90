/* The codec of choose_main.c; codec_mask is defined here, so that its file is this header. */
void codec_init(int seed);
int codec_encode(int value);
int codec_decode(int value);

static inline int codec_mask(int value) { return value > 0 ? value & 0xffff : 0; }
