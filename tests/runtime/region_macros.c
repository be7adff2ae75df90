/* SAMPLER_REGION / SAMPLER_REGION_PASSED (<sampler/record.h>), compiled as C: one stretch of code instrumented
 * site by site, and the same stretch behind the amortized check. runtime_unit_test runs both from the same
 * countdowns and expects the same counters and the same countdown afterwards. */
#include <stdint.h>
#include <string.h>

#include <sampler/sampler.h>

#define SAMPLER_UNIT_SIGNATURE "7e61a9d0c3b24f5e8a1d2c3b4a5f6e70"
#define REGION_SITES(SCHEME, SITE, BOUND, END)                                          \
  SCHEME(branches, none)                                                                \
    SITE(negative, "region_macros.c", "30", "classify", "1", "x < 0")                  \
    SITE(small, "region_macros.c", "31", "classify", "2", "x < 10")                    \
    SITE(even, "region_macros.c", "32", "classify", "3", "(x & 1) == 0")               \
  END(branches)                                                                         \
  SCHEME(scalar_pairs, none)                                                            \
    SITE(x_vs_limit, "region_macros.c", "33", "classify", "4", "x", "local", "direct", "limit", "local") \
  END(scalar_pairs)
SAMPLER_DEFINE_UNIT(REGION_SITES);

/* Paths: 1 site (negative), 2 (small), 4 (even, then the pair). */
int region_test_per_site(int x, int limit) {
  if (SAMPLER_BRANCH(negative, x < 0)) return -1;
  if (SAMPLER_BRANCH(small, x < 10)) return 0;
  int kind = SAMPLER_BRANCH(even, (x & 1) == 0) ? 2 : 3;
  SAMPLER_SCALAR_PAIR(x_vs_limit, x, limit);
  return kind;
}

int region_test_amortized(int x, int limit) {
  if (SAMPLER_REGION(4)) {
    if (x < 0) {
      SAMPLER_REGION_PASSED(1);
      return -1;
    }
    if (x < 10) {
      SAMPLER_REGION_PASSED(2);
      return 0;
    }
    int kind = (x & 1) == 0 ? 2 : 3;
    SAMPLER_REGION_PASSED(4);
    return kind;
  }
  return region_test_per_site(x, limit);
}

/* The unit's counters, branches then scalar-pairs: 3 * 2 + 1 * 3 values. */
size_t region_test_counters(uint64_t* out) {
  size_t n = 0;
  for (int s = 0; s < 2; ++s) {
    const struct sampler_scheme* scheme = &sampler_unit_schemes[s];
    memcpy(out + n, scheme->values, sizeof(uint64_t) * scheme->site_count * scheme->columns);
    n += scheme->site_count * scheme->columns;
  }
  return n;
}
