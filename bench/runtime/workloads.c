/* Workloads for the runtime's benchmark, compiled twice from this one source: instrumented (the functions are
 * named *_instrumented) and with SAMPLER_UNINSTRUMENTED (named *_plain), so both run in the same process.
 *
 *   fast_path_*   a tight loop (a one-cycle dependency chain, opaque to the vectoriser) with one coverage site
 *                 per iteration: the cost of one site on the fast path, not hidden behind other latency
 *   dense_*       an instrumentation-dense workload in the style of assertion-heavy code: hashing into a
 *                 table, a binary search and a small state machine, seven sites per iteration (branches on each
 *                 decision, the return of a helper call, a scalar pair, bounds) in 150 executed instructions
 *                 (x86-64, gcc -O2, the uninstrumented build: objdump -d reads ~45 straight-line plus ~10 search
 *                 steps of ~9, ~135; callgrind's count of the instructions dense_plain executes is 150.0 per
 *                 iteration), i.e. a site every ~21 instructions: denser than the goal's "a site every few dozen
 *                 instructions", a harder case kept beside the next one
 *   records_*     the goal's density: a parser of untrusted records (a tag, a length, a payload of 8 to 28 bytes,
 *                 its Fletcher-16), with sites on its decisions: the length (bounds), the record fits the buffer,
 *                 the checksum matches, the tag is known (branches), its leading word against the previous one
 *                 (a scalar pair). Counted in the uninstrumented build (objdump -d of records_plain): 87 + 6 L
 *                 instructions for an intact record of L payload bytes (6 per byte in fletcher16's loop, 87
 *                 around it: the checks, the checksum's reduction, the 4-byte word gathered byte by byte), ~195
 *                 for the mean L of 18, and callgrind counts 195.4 per record executed; the sites executed per
 *                 record are 4.90 (3, plus known_tag for the 31 in 32 intact ones and the pair for the 31 in 32
 *                 of those with a known tag: a SAMPLER_SPARSITY=1 report's counts), so a site every ~40
 *                 instructions
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

#define BENCH_SITES(SCHEME, SITE, BOUND, END)                                                                    \
  SCHEME(coverage, none)                                                                                         \
    SITE(loop, "workloads.c", "68", "fast_path", "1")                                                            \
  END(coverage)                                                                                                  \
  SCHEME(branches, none)                                                                                         \
    SITE(odd, "workloads.c", "110", "dense", "1", "x & 1")                                                       \
    SITE(hit, "workloads.c", "116", "dense", "2", "table[slot] == key")                                          \
    SITE(found, "workloads.c", "121", "dense", "6", "where >= 0")                                                \
    SITE(accept, "workloads.c", "99", "step", "1", "state == 3")                                                 \
    SITE(fits, "workloads.c", "148", "records", "2", "position + 4 + length <= size")                            \
    SITE(intact, "workloads.c", "151", "records", "3", "fletcher16(payload, length) == stored")                  \
    SITE(known_tag, "workloads.c", "151", "records", "4", "tag < 4")                                             \
  END(branches)                                                                                                  \
  SCHEME(returns, none)                                                                                          \
    SITE(search_result, "workloads.c", "120", "dense", "3", "search")                                            \
  END(returns)                                                                                                   \
  SCHEME(scalar_pairs, none)                                                                                     \
    SITE(key_vs_previous, "workloads.c", "113", "dense", "4", "key", "local", "direct", "previous", "local")     \
    SITE(word_vs_previous, "workloads.c", "154", "records", "5", "word", "local", "direct", "previous", "local") \
  END(scalar_pairs)                                                                                              \
  SCHEME(bounds, none)                                                                                           \
    BOUND(slot, SAMPLER_BOUND_U32, "workloads.c", "115", "dense", "5", "slot", "local", "direct")                \
    BOUND(length, SAMPLER_BOUND_U32, "workloads.c", "147", "records", "1", "length", "local", "direct")          \
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

/* records: a buffer of records, each a tag byte, a length byte L, L payload bytes and the payload's Fletcher-16
 * (2 bytes, little-endian), checked and summarised the way a parser of untrusted input does it. */
static uint32_t fletcher16(const uint8_t* data, size_t size) {
  uint32_t sum1 = 0, sum2 = 0;  /* size <= 255: no overflow before the final reduction */
  for (size_t i = 0; i < size; ++i) {
    sum1 += data[i];
    sum2 += sum1;
  }
  return (sum2 % 255) << 8 | (sum1 % 255);
}

/* tallies: 4 counters, one per known tag. Returns a checksum of the intact records' leading words. */
uint64_t WORKLOAD(records)(const uint8_t* buffer, size_t size, uint32_t* tallies) {
  uint64_t checksum = 0;
  uint32_t previous = 0;
  size_t position = 0;
  while (position + 2 <= size) {
    unsigned tag = buffer[position], length = buffer[position + 1];
    SAMPLER_BOUND(length, length);
    if (!SAMPLER_BRANCH(fits, position + 4 + length <= size)) break;
    const uint8_t* payload = buffer + position + 2;
    uint32_t stored = payload[length] | (uint32_t)payload[length + 1] << 8;
    if (SAMPLER_BRANCH(intact, fletcher16(payload, length) == stored) && SAMPLER_BRANCH(known_tag, tag < 4)) {
      uint32_t word = 0;
      for (unsigned i = 0; i < 4 && i < length; ++i) word |= (uint32_t)payload[i] << (8 * i);
      SAMPLER_SCALAR_PAIR_UNSIGNED(word_vs_previous, word, previous);
      tallies[tag] += 1;
      checksum = checksum * 31 + word;
      previous = word;
    }
    position += 4 + (size_t)length;
  }
  return checksum;
}

#ifndef SAMPLER_UNINSTRUMENTED
/* records with the amortized check (SAMPLER_REGION, <sampler/record.h>): one check per record, whose code passes at
 * most 5 sites; when the countdown is above 5 the record is parsed by the plain code, which takes off the countdown
 * the sites its path passed (2 when the record does not fit, 3 if it is not intact, 4 with an unknown tag, else
 * 5); else by the instrumented code, site by site. The same sites sample as in records_instrumented. */
uint64_t records_region(const uint8_t* buffer, size_t size, uint32_t* tallies) {
  uint64_t checksum = 0;
  uint32_t previous = 0;
  size_t position = 0;
  while (position + 2 <= size) {
    unsigned tag = buffer[position], length = buffer[position + 1];
    const uint8_t* payload = buffer + position + 2;
    if (SAMPLER_REGION(5)) {
      if (!(position + 4 + length <= size)) {
        SAMPLER_REGION_PASSED(2);
        break;
      }
      uint32_t stored = payload[length] | (uint32_t)payload[length + 1] << 8;
      if (fletcher16(payload, length) == stored && tag < 4) {
        SAMPLER_REGION_PASSED(5);
        uint32_t word = 0;
        for (unsigned i = 0; i < 4 && i < length; ++i) word |= (uint32_t)payload[i] << (8 * i);
        tallies[tag] += 1;
        checksum = checksum * 31 + word;
        previous = word;
      } else {
        SAMPLER_REGION_PASSED(fletcher16(payload, length) == stored ? 4 : 3);  /* CSE'd: no second checksum */
      }
    } else {
      SAMPLER_BOUND(length, length);
      if (!SAMPLER_BRANCH(fits, position + 4 + length <= size)) break;
      uint32_t stored = payload[length] | (uint32_t)payload[length + 1] << 8;
      if (SAMPLER_BRANCH(intact, fletcher16(payload, length) == stored) && SAMPLER_BRANCH(known_tag, tag < 4)) {
        uint32_t word = 0;
        for (unsigned i = 0; i < 4 && i < length; ++i) word |= (uint32_t)payload[i] << (8 * i);
        SAMPLER_SCALAR_PAIR_UNSIGNED(word_vs_previous, word, previous);
        tallies[tag] += 1;
        checksum = checksum * 31 + word;
        previous = word;
      }
    }
    position += 4 + (size_t)length;
  }
  return checksum;
}
#endif
