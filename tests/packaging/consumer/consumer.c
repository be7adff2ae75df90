/* An instrumented program outside the sampler tree (tests/packaging/consumer.sh): one unit, declared by hand
 * with <sampler/sampler.h>, with sites of three schemes whose counts are fixed when every opportunity is
 * sampled (SAMPLER_SPARSITY=1): the test resolves the report and compares it line for line. */
#include <sampler/sampler.h>

#include <stdio.h>

#define SAMPLER_UNIT_SIGNATURE "c0115e1ec0115e1ec0115e1ec0115e1e"
#define CONSUMER_SITES(SCHEME, SITE, BOUND, END)                                  \
  SCHEME(function_entries, none)                                                  \
    SITE(enter_main, "consumer.c", "25", "main", "0")                             \
    SITE(enter_weigh, "consumer.c", "18", "weigh", "0")                           \
  END(function_entries)                                                           \
  SCHEME(branches, none)                                                          \
    SITE(is_odd, "consumer.c", "20", "weigh", "1", "value % 2 != 0")              \
  END(branches)                                                                   \
  SCHEME(returns, none)                                                           \
    SITE(weigh_result, "consumer.c", "29", "main", "2", "weigh")                  \
  END(returns)
SAMPLER_DEFINE_UNIT(CONSUMER_SITES);

static int weigh(int value) {
  SAMPLER_FUNCTION_ENTRY(enter_weigh);
  if (SAMPLER_BRANCH(is_odd, value % 2 != 0)) return -value;
  return value;
}

int main(void) {
  SAMPLER_FUNCTION_ENTRY(enter_main);
  int total = 0;
  for (int i = 0; i < 10; ++i) {
    int weight = weigh(i);
    SAMPLER_RETURN(weigh_result, weight);
    total += weight;
  }
  printf("total %d\n", total);
  return 0;
}
