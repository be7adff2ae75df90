/* The torture program's second instrumented unit: a wide tuple scheme, so that the report has long lines and,
 * with its 8 sites, a few kilobytes of its own (enough to fill a small pipe in the middle of this unit). */
#include <sampler/sampler.h>

#include "torture.h"

#define SAMPLER_SCHEME_NAME_wide "wide"
#define SAMPLER_COLUMNS_wide 256

#define SAMPLER_UNIT_SIGNATURE "70c70e00000000000000000000000002"
#define MORE_SITES(SCHEME, SITE, BOUND, END)                                 \
  SCHEME(wide, none)                                                         \
    SITE(spread0, "torture_more.c", "30", "torture_more_work", "0", "i")     \
    SITE(spread1, "torture_more.c", "31", "torture_more_work", "1", "i")     \
    SITE(spread2, "torture_more.c", "32", "torture_more_work", "2", "i")     \
    SITE(spread3, "torture_more.c", "33", "torture_more_work", "3", "i")     \
    SITE(spread4, "torture_more.c", "34", "torture_more_work", "4", "i")     \
    SITE(spread5, "torture_more.c", "35", "torture_more_work", "5", "i")     \
    SITE(spread6, "torture_more.c", "36", "torture_more_work", "6", "i")     \
    SITE(spread7, "torture_more.c", "37", "torture_more_work", "7", "i")     \
  END(wide)                                                                  \
  SCHEME(coverage, none)                                                     \
    SITE(more_iteration, "torture_more.c", "40", "torture_more_work", "8")   \
  END(coverage)
SAMPLER_DEFINE_UNIT(MORE_SITES);

void torture_more_work(long n) {
  for (long i = 0; i < n; ++i) {
    SAMPLER_TUPLE(wide, spread0, i % 256);
    SAMPLER_TUPLE(wide, spread1, i % 256);
    SAMPLER_TUPLE(wide, spread2, i % 256);
    SAMPLER_TUPLE(wide, spread3, i % 256);
    SAMPLER_TUPLE(wide, spread4, i % 256);
    SAMPLER_TUPLE(wide, spread5, i % 256);
    SAMPLER_TUPLE(wide, spread6, i % 256);
    SAMPLER_TUPLE(wide, spread7, i % 256);
    SAMPLER_COVERAGE(more_iteration);
  }
}
