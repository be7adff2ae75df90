/* The torture suite's instrumented plugin: torture-host dlopen()s it after installing signal handlers of its own,
 * so libsampler starts (and installs its crash handler) after them. Built instrumented
 * (libtorture-plugin.so, linked to libsampler.so) and uninstrumented (the baseline). */
#include <sampler/sampler.h>

#include "torture.h"

#define SAMPLER_UNIT_SIGNATURE "70c70e00000000000000000000000003"
#define PLUGIN_SITES(SCHEME, SITE, BOUND, END)                            \
  SCHEME(coverage, none)                                                  \
    SITE(plugin_iteration, "torture_plugin.c", "20", "torture_plugin_work", "0") \
  END(coverage)
SAMPLER_DEFINE_UNIT(PLUGIN_SITES);

__attribute__((visibility("default"))) long torture_plugin_work(long n) {
  long total = 0;
  for (long i = 0; i < n; ++i) {
    SAMPLER_COVERAGE(plugin_iteration);
    total += i;
  }
  return total;
}
