/* sampler runtime: the inline fast path of every recording helper (one per scheme of docs/formats.md section 2).
 *
 * Each helper decrements the thread's countdown and, only when it reaches zero (a predicted-not-taken branch),
 * calls the runtime, which records the observation. These take the scheme table and the site index explicitly;
 * <sampler/unit.h> wraps them in macros that name sites. Classification (sign, comparison, float kind) happens in
 * the runtime, so the fast path evaluates the operands and nothing else.
 */
#ifndef SAMPLER_RECORD_H
#define SAMPLER_RECORD_H

#include <stdint.h>

#include "sampler/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The fast path: true (rarely) when this opportunity must go to the runtime. */
#define SAMPLER_OPPORTUNITY() __builtin_expect(--sampler_countdown <= 0, 0)

/** The amortized check (Liblit et al., PLDI 2003), for a stretch of code without loops or calls that passes at
 *  most `k` sites on any path: true (likely) when none of them can sample, i.e. the countdown is above `k`. Then
 *  run a copy of the stretch without its sites and, on each way out of it, SAMPLER_REGION_PASSED(n) with the
 *  number of sites that path passed; otherwise run the instrumented stretch, site by site:
 *
 *      if (SAMPLER_REGION(3)) {
 *        if (x > limit) { SAMPLER_REGION_PASSED(1); return -1; }   // the sites' plain conditions
 *        ...;
 *        SAMPLER_REGION_PASSED(3);
 *      } else {
 *        if (SAMPLER_BRANCH(over, x > limit)) return -1;            // the same code, instrumented
 *        ...;
 *      }
 *
 *  Every site samples exactly when the per-site check would have sampled it. A path that passes more than `k`
 *  sites, or a count that is not the path's own, changes which sites sample (fewer: later sites sample less
 *  often; more: more often). A call in the stretch that runs sites itself must come after SAMPLER_REGION_PASSED.
 *  Both are C expressions with no function call: no runtime code runs unless a site samples. */
#define SAMPLER_REGION(k) __builtin_expect(sampler_countdown > (int64_t)(k), 1)
#define SAMPLER_REGION_PASSED(n) ((void)(sampler_countdown -= (int64_t)(n)))

/** Any counter scheme and generic N-tuples: one observation in `column`. */
static inline void sampler_count(struct sampler_scheme* scheme, uint32_t site, uint32_t column) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_counter(scheme, site, column);
}

/** branches: counts `condition` (column 0 false, 1 true) and returns it as 0 or 1. */
static inline int sampler_branch(struct sampler_scheme* scheme, uint32_t site, int condition) {
  condition = condition != 0;
  if (SAMPLER_OPPORTUNITY()) sampler_take_counter(scheme, site, (uint32_t)condition);
  return condition;
}

/** returns: the sign of a signed value (columns: negative, zero, positive). */
static inline void sampler_return_signed(struct sampler_scheme* scheme, uint32_t site, int64_t value) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_sign(scheme, site, value);
}

/** returns: an unsigned value or a pointer (zero or positive). */
static inline void sampler_return_unsigned(struct sampler_scheme* scheme, uint32_t site, uint64_t value) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_sign_unsigned(scheme, site, value);
}

/** scalar-pairs over signed values (columns: left < right, equal, left > right). */
static inline void sampler_pair_signed(struct sampler_scheme* scheme, uint32_t site, int64_t left, int64_t right) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_compare(scheme, site, left, right);
}

/** scalar-pairs over unsigned values or pointers. */
static inline void sampler_pair_unsigned(struct sampler_scheme* scheme, uint32_t site, uint64_t left,
                                         uint64_t right) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_compare_unsigned(scheme, site, left, right);
}

/** float-kinds, classified in the value's own type (a float subnormal is a double normal). */
static inline void sampler_float_kind_f(struct sampler_scheme* scheme, uint32_t site, float value) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_float_kind(scheme, site, value);
}
static inline void sampler_float_kind_d(struct sampler_scheme* scheme, uint32_t site, double value) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_double_kind(scheme, site, value);
}
static inline void sampler_float_kind_ld(struct sampler_scheme* scheme, uint32_t site, long double value) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_long_double_kind(scheme, site, value);
}

/** atoms: an access to shared memory at `address`. */
static inline void sampler_atom(struct sampler_scheme* scheme, uint32_t site, const volatile void* address) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_atom(scheme, site, address);
}

/** bounds: a value assigned at the site, converted to 64 bits (see sampler_take_bound). */
static inline void sampler_bound(struct sampler_scheme* scheme, uint32_t site, uint64_t value) {
  if (SAMPLER_OPPORTUNITY()) sampler_take_bound(scheme, site, value);
}

#ifdef __cplusplus
}  // extern "C"

/* C++: one name for the three float types. */
static inline void sampler_float_kind(struct sampler_scheme* scheme, uint32_t site, float value) {
  sampler_float_kind_f(scheme, site, value);
}
static inline void sampler_float_kind(struct sampler_scheme* scheme, uint32_t site, double value) {
  sampler_float_kind_d(scheme, site, value);
}
static inline void sampler_float_kind(struct sampler_scheme* scheme, uint32_t site, long double value) {
  sampler_float_kind_ld(scheme, site, value);
}
#else
/* C11: one name for the three float types; any other arithmetic type is classified as a double. */
#define sampler_float_kind(scheme, site, value)                                                         \
  _Generic((value), float: sampler_float_kind_f, long double: sampler_float_kind_ld, default: sampler_float_kind_d)( \
      (scheme), (site), (value))
#endif

#endif /* SAMPLER_RECORD_H */
