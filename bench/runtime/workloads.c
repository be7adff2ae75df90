/* Workloads for the runtime's benchmark, compiled twice from this one source: instrumented (the functions are
 * named *_instrumented) and with SAMPLER_UNINSTRUMENTED (named *_plain), so both run in the same process.
 *
 *   fast_path_*   a tight loop (a one-cycle dependency chain, opaque to the vectoriser) with one coverage site
 *                 per iteration: the cost of one site on the fast path, not hidden behind other latency
 *   dense_*       an instrumentation-dense workload in the style of assertion-heavy code: hashing into a
 *                 table, a binary search and a small state machine, seven sites in about 135 executed
 *                 instructions per iteration (x86-64, counted in the uninstrumented build's disassembly: ~45
 *                 straight-line plus ~10 search steps of ~9), i.e. a site every ~19 instructions, somewhat denser
 *                 than the goal's "a site every few dozen instructions" (branches on each decision, the return
 *                 of a helper call, a scalar pair, bounds)
 */
#include <stddef.h>
#include <stdint.h>

#include <sampler/sampler.h>

#ifdef SAMPLER_UNINSTRUMENTED
#define WORKLOAD(name) name##_plain
#define SAMPLER_UNIT_SIGNATURE "00000000000000000000000000000000"
#else
#define WORKLOAD(name) name##_instrumented
#define SAMPLER_UNIT_SIGNATURE "be0c4b0e4c4b0e4c4b0e4c4b0e4c4b0e"
#endif

#define BENCH_SITES(SCHEME, SITE, BOUND, END)                                                  \
  SCHEME(coverage, none)                                                                       \
    SITE(loop, "workloads.c", "50", "fast_path", "1")                                          \
  END(coverage)                                                                                \
  SCHEME(branches, none)                                                                       \
    SITE(odd, "workloads.c", "92", "dense", "1", "x & 1")                                      \
    SITE(hit, "workloads.c", "98", "dense", "2", "table[slot] == key")                         \
    SITE(found, "workloads.c", "103", "dense", "6", "where >= 0")                              \
    SITE(accept, "workloads.c", "81", "step", "1", "state == 3")                              \
  END(branches)                                                                                \
  SCHEME(returns, none)                                                                        \
    SITE(search_result, "workloads.c", "102", "dense", "3", "search")                           \
  END(returns)                                                                                 \
  SCHEME(scalar_pairs, none)                                                                   \
    SITE(key_vs_previous, "workloads.c", "95", "dense", "4", "key", "local", "direct", "previous", "local") \
  END(scalar_pairs)                                                                            \
  SCHEME(bounds, none)                                                                         \
    BOUND(slot, SAMPLER_BOUND_U32, "workloads.c", "97", "dense", "5", "slot", "local", "direct") \
  END(bounds)
SAMPLER_DEFINE_UNIT(BENCH_SITES);

uint64_t WORKLOAD(fast_path)(uint64_t n) {
  uint64_t accumulator = 0;
  for (uint64_t i = 0; i < n; ++i) {
    accumulator += i;
    __asm__("" : "+r"(accumulator));  /* keeps the loop scalar and the chain one add long */
    SAMPLER_COVERAGE(loop);
  }
  return accumulator;
}

static uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

static int search(const uint32_t* sorted, size_t size, uint32_t key) {
  size_t low = 0, high = size;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (sorted[middle] == key) return (int)middle;
    if (sorted[middle] > key) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return -1;
}

static unsigned step(unsigned state, uint32_t input) {
  static const unsigned char next[4][4] = {{1, 0, 2, 0}, {1, 3, 2, 0}, {0, 3, 2, 1}, {3, 3, 0, 1}};
  state = next[state & 3][input & 3];
  if (SAMPLER_BRANCH(accept, state == 3)) state ^= (input >> 2) & 1;
  return state;
}

/* table: 4096 entries, sorted: 1024 ascending values. Returns a checksum so nothing is optimised away. */
uint64_t WORKLOAD(dense)(const uint32_t* input, size_t n, uint32_t* table, const uint32_t* sorted) {
  uint64_t checksum = 0;
  uint32_t previous = 0;
  unsigned state = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t x = input[i];
    if (SAMPLER_BRANCH(odd, x & 1)) x = 3 * x + 1;
    else x >>= 1;
    uint32_t key = mix(x);
    SAMPLER_SCALAR_PAIR_UNSIGNED(key_vs_previous, key, previous);
    uint32_t slot = key & 4095;
    SAMPLER_BOUND(slot, slot);
    if (SAMPLER_BRANCH(hit, table[slot] == key)) checksum += key;
    table[slot] = key;
    previous = key;
    int where = search(sorted, 1024, key & 0xffff);
    SAMPLER_RETURN(search_result, where);
    if (SAMPLER_BRANCH(found, where >= 0)) checksum += mix((uint32_t)where ^ key);
    checksum += (uint64_t)(where + 1) * 0x9e3779b97f4a7c15ull;
    state = step(state, key);
    checksum ^= state;
  }
  return checksum;
}
