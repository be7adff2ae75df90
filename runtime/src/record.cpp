// The slow path of every recording helper: decide (take_opportunity), classify, count atomically, stamp.
// Counters are updated with relaxed atomic read-modify-writes so that threads sampling the same site lose no
// counts (docs/instrumenting.md section 2); the report reads them with relaxed loads.
#include <sys/types.h>

#include "atomic.h"
#include "raw_syscall.h"
#include "sampler/abi.h"
#include "sampling.h"
#include "values.h"

namespace sampler::runtime {
namespace {

bool valid_site(const sampler_scheme* scheme, uint32_t site) {
  return scheme != nullptr && scheme->values != nullptr && site < scheme->site_count;
}

/// Timestamps (logical clock, see sampling.h): the first sample of the site keeps its time, every sample moves
/// the last one forward. Out of line: the schemes without timestamps pay only the inline test in stamp().
__attribute__((noinline)) void stamp_times(sampler_scheme* scheme, uint32_t site) {
  uint64_t now = next_timestamp();
  // The first time is written once: a plain load sees it set on every later sample, where a compare-and-swap that
  // would fail anyway is a locked instruction all the same.
  if (scheme->first != nullptr && load_relaxed(&scheme->first[site]) == 0) {
    uint64_t expected = 0;
    compare_exchange(&scheme->first[site], expected, now);
  }
  if (scheme->last != nullptr) fetch_max_relaxed(&scheme->last[site], now);
}

inline void stamp(sampler_scheme* scheme, uint32_t site) {
  if (scheme->first != nullptr || scheme->last != nullptr) stamp_times(scheme, site);
}

__attribute__((always_inline)) inline void record_counter(sampler_scheme* scheme, uint32_t site, uint32_t column) {
  if (!valid_site(scheme, site) || scheme->kind != SAMPLER_SCHEME_COUNTERS || column >= scheme->columns) return;
  fetch_add_relaxed(&scheme->values[static_cast<uint64_t>(site) * scheme->columns + column], uint64_t{1});
  stamp(scheme, site);
}

/// atoms: the last sampled accessor of each address, in a lossy table of address and thread bits packed into one
/// word so that a single atomic exchange reads and replaces it.
constexpr uint32_t kAtomSlots = 4096;
uint64_t g_atom_slots[kAtomSlots];
__thread uint32_t t_atom_thread __attribute__((tls_model("initial-exec")));

uint32_t classify_atom(const volatile void* address) {
  uint32_t thread = t_atom_thread;
  if (thread == 0) {
    thread = (static_cast<uint32_t>(sys::gettid()) & 0xffff) | 0x10000;  // never 0 once set
    t_atom_thread = thread;
  }
  uint64_t bits = reinterpret_cast<uintptr_t>(address) & 0xffffffffffffull;  // 48-bit user addresses
  uint64_t mixed = bits * 0x9e3779b97f4a7c15ull;
  uint64_t* slot = &g_atom_slots[mixed >> 52];  // top 12 bits: 4096 slots
  uint64_t previous = exchange(slot, (bits << 16) | (thread & 0xffff));
  bool same_address = previous != 0 && (previous >> 16) == bits;
  return same_address && (previous & 0xffff) != (thread & 0xffff) ? 1 : 0;
}

// The nine float kinds (sampler_float_kind), with the compiler's classification builtins: no libm.
#define SAMPLER_CLASSIFY_FLOAT(value)                                                                        \
  __builtin_fpclassify(FP_NAN_, FP_INFINITE_, FP_NORMAL_, FP_SUBNORMAL_, FP_ZERO_, value)

enum { FP_NAN_, FP_INFINITE_, FP_NORMAL_, FP_SUBNORMAL_, FP_ZERO_ };

template <typename T>
uint32_t classify(T value) {
  bool negative = __builtin_signbit(value) != 0;
  switch (SAMPLER_CLASSIFY_FLOAT(value)) {
    case FP_NAN_:
      return SAMPLER_FLOAT_NAN;
    case FP_INFINITE_:
      return negative ? SAMPLER_FLOAT_NEGATIVE_INFINITE : SAMPLER_FLOAT_POSITIVE_INFINITE;
    case FP_ZERO_:
      return negative ? SAMPLER_FLOAT_NEGATIVE_ZERO : SAMPLER_FLOAT_POSITIVE_ZERO;
    case FP_SUBNORMAL_:
      return negative ? SAMPLER_FLOAT_NEGATIVE_SUBNORMAL : SAMPLER_FLOAT_POSITIVE_SUBNORMAL;
    default:
      return negative ? SAMPLER_FLOAT_NEGATIVE_NORMAL : SAMPLER_FLOAT_POSITIVE_NORMAL;
  }
}

// sampler_classify_compare() over unsigned values: the column of less, equal, greater.
uint32_t classify_unsigned_compare(uint64_t left, uint64_t right) {
  return static_cast<uint32_t>((left > right) - (left < right) + 1);
}

/// One pair site of a group: `value` against `other`, signed or unsigned (the group's bits, as passed).
template <bool kSigned>
inline void record_compare(sampler_scheme* scheme, uint32_t site, uint64_t value, uint64_t other) {
  uint32_t column = kSigned ? sampler_classify_compare(static_cast<int64_t>(value), static_cast<int64_t>(other))
                            : classify_unsigned_compare(value, other);
  record_counter(scheme, site, column);
}

/// The other operands of a group's sites, as the entry points take them: others[i] (`constants` null), or with
/// the constants apart (sampler_take_compares_constants): variables[i] for the first count - constants[0] sites,
/// then constants[1], constants[2], ... Signed entry points' int64_t arrays are read as uint64_t (which may alias).
struct Others {
  const uint64_t* variables;
  const uint64_t* constants;
  uint64_t at(uint32_t i, uint32_t count) const {
    if (!constants) return variables[i];
    uint32_t first_constant = count - static_cast<uint32_t>(constants[0]);
    return i < first_constant ? variables[i] : constants[1 + i - first_constant];
  }
};

// The sites of a group that sample, in order, from site `i` on: each site takes one off the countdown and samples
// when it reaches zero, so the sites before that pass without a look (the loop runs once per sample, not per site).
template <bool kSigned>
__attribute__((noinline)) void take_group_from(uint32_t i, uint32_t count, sampler_scheme* scheme,
                                               uint32_t first_site, uint64_t value, Others others) {
  for (; i < count; ++i) {
    int64_t countdown = sampler_countdown;
    uint64_t passing = countdown > 1 ? static_cast<uint64_t>(countdown - 1) : 0;
    if (passing >= count - i) {
      sampler_countdown = countdown - (count - i);
      return;
    }
    i += static_cast<uint32_t>(passing);
    sampler_countdown = 0;
    if (take_opportunity()) record_compare<kSigned>(scheme, first_site + i, value, others.at(i, count));
  }
}

/// Site i sampled (its countdown is drawn): records it, then the rest of the group.
template <bool kSigned>
__attribute__((noinline)) void record_then_take_group_from(uint32_t i, uint32_t count, sampler_scheme* scheme,
                                                           uint32_t first_site, uint64_t value, Others others) {
  record_compare<kSigned>(scheme, first_site + i, value, others.at(i, count));
  take_group_from<kSigned>(i + 1, count, scheme, first_site, value, others);
}

// take_group_from(0, ...), with its common case first: one site of the group samples, by the fast path, and the
// countdown it draws outlasts the rest of the group. Every call is a tail call (stamp_times, or the functions above
// for the other cases, which go on from the same state), so the common case saves no registers.
template <bool kSigned>
inline void take_group(uint32_t count, sampler_scheme* scheme, uint32_t first_site, uint64_t value, Others others) {
  int64_t countdown = sampler_countdown;
  uint64_t passing = countdown > 1 ? static_cast<uint64_t>(countdown - 1) : 0;
  if (passing >= count) {
    sampler_countdown = countdown - count;
    return;
  }
  uint32_t i = static_cast<uint32_t>(passing);  // the site whose opportunity is taken
  if (__builtin_expect(!draw_from_bank(), 0)) {
    sampler_countdown = 1;  // site i samples (or not) in the loop as it would have here
    return take_group_from<kSigned>(i, count, scheme, first_site, value, others);
  }
  uint32_t after = count - 1 - i;  // the sites after i, which the new countdown passes unless it ends among them
  int64_t next = sampler_countdown;
  if (__builtin_expect(next > static_cast<int64_t>(after), 1)) {
    sampler_countdown = next - after;
    return record_compare<kSigned>(scheme, first_site + i, value, others.at(i, count));
  }
  return record_then_take_group_from<kSigned>(i, count, scheme, first_site, value, others);
}

}  // namespace
}  // namespace sampler::runtime

using sampler::runtime::classify_unsigned_compare;
using sampler::runtime::record_counter;
using sampler::runtime::take_group;
using sampler::runtime::take_opportunity;

extern "C" {

SAMPLER_API void sampler_take_counter(sampler_scheme* scheme, uint32_t site, uint32_t column) {
  if (take_opportunity()) record_counter(scheme, site, column);
}

SAMPLER_API void sampler_take_sign(sampler_scheme* scheme, uint32_t site, int64_t value) {
  if (take_opportunity()) record_counter(scheme, site, sampler_classify_sign(value));
}

SAMPLER_API void sampler_take_sign_unsigned(sampler_scheme* scheme, uint32_t site, uint64_t value) {
  if (take_opportunity()) record_counter(scheme, site, value == 0 ? 1 : 2);
}

SAMPLER_API void sampler_take_compare(sampler_scheme* scheme, uint32_t site, int64_t left, int64_t right) {
  if (take_opportunity()) record_counter(scheme, site, sampler_classify_compare(left, right));
}

SAMPLER_API void sampler_take_compare_unsigned(sampler_scheme* scheme, uint32_t site, uint64_t left,
                                               uint64_t right) {
  if (take_opportunity()) record_counter(scheme, site, classify_unsigned_compare(left, right));
}

SAMPLER_API void sampler_take_compares(sampler_scheme* scheme, uint32_t first_site, uint32_t count, int64_t value,
                                       const int64_t* others) {
  take_group<true>(count, scheme, first_site, static_cast<uint64_t>(value),
                   {reinterpret_cast<const uint64_t*>(others), nullptr});
}

SAMPLER_API void sampler_take_compares_unsigned(sampler_scheme* scheme, uint32_t first_site, uint32_t count,
                                                uint64_t value, const uint64_t* others) {
  take_group<false>(count, scheme, first_site, value, {others, nullptr});
}

SAMPLER_API void sampler_take_compares_constants(sampler_scheme* scheme, uint32_t first_site, uint32_t count,
                                                 int64_t value, const int64_t* variables, const int64_t* constants) {
  take_group<true>(count, scheme, first_site, static_cast<uint64_t>(value),
                   {reinterpret_cast<const uint64_t*>(variables), reinterpret_cast<const uint64_t*>(constants)});
}

SAMPLER_API void sampler_take_compares_constants_unsigned(sampler_scheme* scheme, uint32_t first_site,
                                                          uint32_t count, uint64_t value, const uint64_t* variables,
                                                          const uint64_t* constants) {
  take_group<false>(count, scheme, first_site, value, {variables, constants});
}

SAMPLER_API void sampler_take_float_kind(sampler_scheme* scheme, uint32_t site, float value) {
  if (take_opportunity()) record_counter(scheme, site, sampler_classify_float(value));
}

SAMPLER_API void sampler_take_double_kind(sampler_scheme* scheme, uint32_t site, double value) {
  if (take_opportunity()) record_counter(scheme, site, sampler_classify_double(value));
}

SAMPLER_API void sampler_take_long_double_kind(sampler_scheme* scheme, uint32_t site, long double value) {
  if (take_opportunity()) record_counter(scheme, site, sampler_classify_long_double(value));
}

SAMPLER_API void sampler_take_atom(sampler_scheme* scheme, uint32_t site, const volatile void* address) {
  if (take_opportunity()) record_counter(scheme, site, sampler::runtime::classify_atom(address));
}

SAMPLER_API void sampler_take_bound(sampler_scheme* scheme, uint32_t site, uint64_t value) {
  if (!take_opportunity()) return;
  if (!sampler::runtime::valid_site(scheme, site) || scheme->kind != SAMPLER_SCHEME_BOUNDS ||
      scheme->bound_types == nullptr || scheme->columns != 2) {
    return;
  }
  uint64_t key = sampler::runtime::bound_key(scheme->bound_types[site], value);
  uint64_t* pair = &scheme->values[static_cast<uint64_t>(site) * 2];
  // Stored as (~min key, max key): both grow, both start at 0 (see values.h).
  sampler::runtime::fetch_max_relaxed(&pair[0], ~key);
  sampler::runtime::fetch_max_relaxed(&pair[1], key);
  sampler::runtime::stamp(scheme, site);
}

SAMPLER_API uint32_t sampler_classify_float(float value) { return sampler::runtime::classify(value); }
SAMPLER_API uint32_t sampler_classify_double(double value) { return sampler::runtime::classify(value); }
SAMPLER_API uint32_t sampler_classify_long_double(long double value) {
  return sampler::runtime::classify(value);
}

}  // extern "C"
