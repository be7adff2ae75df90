/* Example 2, the plugin: an instrumented shared object that sampler-example-host dlopen()s and dlclose()s. Each
 * unload writes its unit's samples section at that moment, and each reload starts again from zero (sampler manual,
 * "samples subreport"), so a report of two loads holds two sections for this unit. */
#include <sampler/sampler.h>

#define SAMPLER_UNIT_SIGNATURE "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define PLUGIN_SITES(SCHEME, SITE, BOUND, END)                                                       \
  SCHEME(function_entries, none)                                                                     \
    SITE(plugin_work_entry, "plugin.c", "21", "plugin_work", "0")                                    \
  END(function_entries)                                                                              \
  SCHEME(branches, none)                                                                             \
    SITE(is_odd, "plugin.c", "25", "plugin_work", "1", "i % 2 != 0")                                 \
  END(branches)                                                                                      \
  SCHEME(bounds, none)                                                                               \
    BOUND(argument, SAMPLER_BOUND_I64, "plugin.c", "22", "plugin_work", "2", "n", "local", "direct") \
  END(bounds)
SAMPLER_DEFINE_UNIT(PLUGIN_SITES);

/* Counts how many of 0..n-1 are odd, recording at every step. Exported for the host. */
__attribute__((visibility("default"))) long plugin_work(long n) {
  SAMPLER_FUNCTION_ENTRY(plugin_work_entry);
  SAMPLER_BOUND(argument, n);
  long odd = 0;
  for (long i = 0; i < n; ++i) {
    if (SAMPLER_BRANCH(is_odd, i % 2 != 0)) ++odd;
  }
  return odd;
}
