/* hello-sampler: the instrumented program of the RPM integration test (tests/packaging/rpm_samplerinfo.sh).
 * Its sites name __FILE__, which is an absolute build-directory path (the spec compiles $PWD/hello.c), so the
 * samplerinfo package shows the macros' rewrite of site file names. Counts are fixed at SAMPLER_SPARSITY=1. */
#include <sampler/sampler.h>

#include <stdio.h>
#include <stdlib.h>

#include "greet.h"

#define SAMPLER_UNIT_SIGNATURE "4e110000000000000000000000000001"
#define HELLO_SITES(SCHEME, SITE, BOUND, END)                                        \
  SCHEME(function_entries, none)                                                     \
    SITE(enter_main, __FILE__, "28", "main", "0")                                    \
  END(function_entries)                                                              \
  SCHEME(branches, none)                                                             \
    SITE(has_name, __FILE__, "30", "main", "1", "argc > 1")                          \
    SITE(long_name, __FILE__, "33", "main", "2", "i < 3")                            \
  END(branches)                                                                      \
  SCHEME(returns, none)                                                              \
    SITE(greet_result, __FILE__, "36", "main", "3", "greet")                         \
  END(returns)
SAMPLER_DEFINE_UNIT(HELLO_SITES);

int main(int argc, char** argv) {
  SAMPLER_FUNCTION_ENTRY(enter_main);
  const char* name = "world";
  if (SAMPLER_BRANCH(has_name, argc > 1)) name = argv[1];
  int written = 0;
  for (int i = 0; i < 5; ++i) {
    if (SAMPLER_BRANCH(long_name, i < 3)) {
      written = greet(name);
      SAMPLER_RETURN(greet_result, written);
    }
  }
  return written > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
