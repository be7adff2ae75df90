/* libgreet.so.1: an instrumented shared library, so the samplerinfo package holds more than one .sites file. */
#include <sampler/sampler.h>

#include <stdio.h>
#include <string.h>

#include "greet.h"

#define SAMPLER_UNIT_SIGNATURE "4e110000000000000000000000000002"
#define GREET_SITES(SCHEME, SITE, BOUND, END)                                        \
  SCHEME(scalar_pairs, none)                                                         \
    SITE(length_vs_limit, __FILE__, "18", "greet", "0", "length", "int", "limit", "int", "local") \
  END(scalar_pairs)
SAMPLER_DEFINE_UNIT(GREET_SITES);

int greet(const char* name) {
  const int limit = 8;
  int length = (int)strlen(name);
  SAMPLER_SCALAR_PAIR(length_vs_limit, length, limit);
  return printf("hello, %.*s\n", length < limit ? length : limit, name);
}
