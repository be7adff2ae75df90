/* sampler runtime: the binary interface between instrumented code and libsampler (docs/instrumenting.md).
 *
 * This is the layer a compiler instrumentation pass targets directly; <sampler/unit.h> builds the same objects
 * with C macros for code instrumented by hand. docs/instrumenting.md describes it in full. Everything here is
 * plain C11 (also valid C++), and every symbol libsampler exports starts with `sampler_`.
 *
 * One instrumented translation unit ("unit") provides, all in its own writable data:
 *   - a `struct sampler_unit` naming its 128-bit signature and its schemes;
 *   - per scheme, a `struct sampler_scheme` and a zero-initialised array of site_count * columns 64-bit values
 *     (and optionally first/last timestamp arrays of site_count values);
 *   - its site text in the non-allocated `.debug_site_info` section (docs/formats.md section 2), one line per site,
 *     in the same order as the values;
 *   - a constructor calling sampler_register_unit() and a destructor calling sampler_unregister_unit().
 * Each site costs, on the fast path, a decrement of the thread-local `sampler_countdown` and a branch; only when
 * the countdown reaches zero does the site call one of the sampler_take_*() functions.
 */
#ifndef SAMPLER_ABI_H
#define SAMPLER_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the runtime's exported interface (libsampler is built with -fvisibility=hidden). */
#define SAMPLER_API __attribute__((visibility("default")))

/** Version of the contract below; a unit built for a version the runtime does not know is refused at
 *  registration. Version 2 lets a unit count its own samples in `values` (sampler_take_opportunity()); a unit of
 *  version 1 only calls the sampler_take_*() functions, which version 2 keeps, and is accepted too. Version 3 adds
 *  the per-site weights and the thresholds of the amortized checks (struct sampler_unit's last four fields), which
 *  a sampling plan sets at registration (docs/instrumenting.md, "Sampling plans"); units of versions 1 and 2 are
 *  accepted, and under a plan their sites weigh one clock unit each. Version 4 adds what each threshold bounds
 *  (`threshold_bounds`), from which the runtime computes the thresholds under a plan, and the `planned` flag; under a
 *  plan the thresholds of a unit of version 3 are all 2^62, as that version's code expects. Version 5 adds the
 *  multiplier SAMPLER_THRESHOLD_BELOW_UNSAMPLED, which a runtime of version 4 would read as a bound of sites: a
 *  unit of version 5 must not register with it (under a plan its counted copies would run). Version 6 adds the
 *  dispatches' entries (multiplier SAMPLER_THRESHOLD_DISPATCH), which a runtime of version 5 would read as a
 *  multiplier: a unit of version 6 must not register with it (under a plan a function would run its twin while a
 *  callee's sites sample). */
#define SAMPLER_ABI_VERSION 6
/** The oldest version a runtime of this version still accepts. */
#define SAMPLER_ABI_OLDEST_VERSION 1

/** How a scheme's values are kept and merged (docs/formats.md section 3). */
enum sampler_scheme_kind {
  SAMPLER_SCHEME_COUNTERS = 0, /**< `columns` 64-bit counters per site, summed */
  SAMPLER_SCHEME_BOUNDS = 1    /**< a min/max pair per site (columns must be 2), see sampler_bound_type */
};

/** The assigned type of a bounds site: how its min and max compare and print, and their initial values
 *  (the type's largest value for min, its smallest for max, so merging by min/max is exact). */
enum sampler_bound_type {
  SAMPLER_BOUND_I8 = 1,
  SAMPLER_BOUND_I16 = 2,
  SAMPLER_BOUND_I32 = 3,
  SAMPLER_BOUND_I64 = 4,
  SAMPLER_BOUND_U8 = 5,
  SAMPLER_BOUND_U16 = 6,
  SAMPLER_BOUND_U32 = 7,
  SAMPLER_BOUND_U64 = 8,
  SAMPLER_BOUND_POINTER = 9 /**< printed as 0x hexadecimal */
};

/* The fields of the two structs below, in order, as FIELD(IR kind, C type, name): the C declarations and a
 * compiler's IR types of them (sampler-cc's plugin, instrumentor/plugin/abi_ir.h) come from these lists, so that
 * the two cannot disagree. The IR kinds: POINTER, U32, U64 and UINTPTR (an integer of a pointer's size). */

/** One scheme's counters in one unit. Lives in the unit's writable data; the runtime only reads the
 *  description fields and updates `values`, `first` and `last` atomically. Code that counts its own samples
 *  (sampler_take_opportunity()) reaches the counters through `values`, read at run time: the runtime may set it at
 *  registration.
 *    name         scheme name, e.g. "branches" (no '"', '&', '<' or newline)
 *    site_count   lines of the matching `<sites>` section
 *    columns      counters per site (docs/formats.md section 2); bounds: 2
 *    kind         enum sampler_scheme_kind
 *    reserved     zero
 *    values       site_count * columns values, zero-initialised (bounds too: see the docs)
 *    bound_types  bounds: site_count enum sampler_bound_type values; otherwise NULL
 *    first        NULL, or site_count zero-initialised "first" timestamps
 *    last         NULL, or site_count zero-initialised "last" timestamps */
#define SAMPLER_SCHEME_FIELDS(FIELD)        \
  FIELD(POINTER, const char*, name)         \
  FIELD(U32, uint32_t, site_count)          \
  FIELD(U32, uint32_t, columns)             \
  FIELD(U32, uint32_t, kind)                \
  FIELD(U32, uint32_t, reserved)            \
  FIELD(POINTER, uint64_t*, values)         \
  FIELD(POINTER, const uint8_t*, bound_types) \
  FIELD(POINTER, uint64_t*, first)          \
  FIELD(POINTER, uint64_t*, last)

/** One instrumented translation unit.
 *    abi_version   SAMPLER_ABI_VERSION
 *    scheme_count  entries of `schemes`
 *    signature     32 lower-case hexadecimal digits, NUL-terminated
 *    schemes       scheme_count entries
 *    next, state   runtime-private: zero-initialise, never touch
 *  Since version 3 (the runtime reads them only from a unit of version 3 or later):
 *    weights          NULL, or weight_count clock units, one per site: the sites of schemes[0] in order, then those
 *                     of schemes[1], ... (weight_count is the sum of the site counts). Initialise each to 1 (uniform
 *                     sampling: one opportunity); a plan sets them at registration. A site subtracts its weight
 *                     from the countdown and samples when the result is <= 0.
 *    thresholds       NULL, or threshold_count values: each amortized check of the unit (a stretch of sites that
 *                     runs without checking them when the countdown is above its threshold) reads its threshold
 *                     here. Initialise each to the check's value under uniform sampling (its number of sites); under
 *                     a plan the runtime computes each from `threshold_bounds` (version 4), or sets every one to
 *                     2^62 (above any countdown) in a unit of version 3, whose sites then each check their own
 *                     weight (docs/decisions.md, "Per-site weights").
 *    weight_count, threshold_count  the entries of those arrays
 *  Since version 4:
 *    threshold_bounds  NULL, or what each threshold bounds, threshold_bounds_size 32-bit words: for each threshold
 *                     in order, n, then a multiplier as two words (low, high), then n pairs (site, times), where
 *                     times with bit 31 set stands for the sites site, site + 1, ... (times - 2^31 of them) once
 *                     each: the threshold under a plan is multiplier * the sum of times * weights[site], saturated
 *                     at 2^62 (a multiplier of 2^64 - 1: 2^62 whatever the weights; of 2^64 - 2: 2^61 - 1).
 *                     A check's threshold is at least the weight of any path its stretch of sites can take (a
 *                     safe bound: docs/decisions.md, "Thresholds from the weights"); the lowering also subtracts some
 *                     entries as the exact weight of the sites a stretch passed without checking them.
 *    threshold_bounds_size  the words of threshold_bounds
 *    planned          zero-initialise: the runtime sets it to 1 when a plan gives the unit its weights */
#define SAMPLER_UNIT_FIELDS(FIELD)                 \
  FIELD(U32, uint32_t, abi_version)                \
  FIELD(U32, uint32_t, scheme_count)               \
  FIELD(POINTER, const char*, signature)           \
  FIELD(POINTER, struct sampler_scheme*, schemes)  \
  FIELD(POINTER, struct sampler_unit*, next)       \
  FIELD(UINTPTR, uintptr_t, state)                 \
  FIELD(POINTER, int64_t*, weights)                \
  FIELD(POINTER, int64_t*, thresholds)             \
  FIELD(U32, uint32_t, weight_count)               \
  FIELD(U32, uint32_t, threshold_count)            \
  FIELD(POINTER, const uint32_t*, threshold_bounds) \
  FIELD(U32, uint32_t, threshold_bounds_size)      \
  FIELD(U32, uint32_t, planned)

/** In a pair of `threshold_bounds`, the bit of the second word that makes the pair a run of sites. */
#define SAMPLER_THRESHOLD_RUN 0x80000000u
/** In the multiplier of `threshold_bounds`, the bit that makes the entry a loop's shift: 0 without a plan (its
 *  value in `thresholds`), 63 under a plan, whatever the other bits and pairs (but for the multipliers 2^64 - 1
 *  and SAMPLER_THRESHOLD_BELOW_UNSAMPLED, 2^64 - 2). A loop checked at its entry shifts
 *  the countdown by it before comparing with its trips times its sites an iteration: under a plan the test fails
 *  and the loop runs its checked copy, whose regions subtract the plan's weights (its copy subtracts immediates), or
 *  an innermost loop its copy for plans, guarded by an entry bounding an iteration's weight (multiplier 1). */
#define SAMPLER_THRESHOLD_SHIFT 0x8000000000000000ull
/** A multiplier of `threshold_bounds` that makes the entry 2^61 - 1 under a plan, whatever its pairs: below every
 *  countdown of sampling off (2^61 and above), above every other. A leaf function's counted copy (which subtracts
 *  immediates) runs when the countdown is above its entry and below 2^61: under a plan, never. Since version 6,
 *  INT64_MIN when its pair names the dispatch of a function the plan turns off (SAMPLER_THRESHOLD_DISPATCH). */
#define SAMPLER_THRESHOLD_BELOW_UNSAMPLED 0xfffffffffffffffeull
/** A multiplier of `threshold_bounds` (since version 6) that makes the entry a function's dispatch: the function
 *  runs its twin without sites when the countdown is at least the entry, 2^61 (sampling off) but for a function a
 *  plan turns off, whose entry is INT64_MIN. Its pairs are (site, times) for each of the function's sites, and
 *  (entry, SAMPLER_THRESHOLD_CALLEE) for each function its twin calls directly: the entry of that function's
 *  dispatch (an entry outside the thresholds: a site the compiler cannot name, the function stays on). Under a plan
 *  a function is off when every one of its sites weighs 0 and every callee is off (the greatest such set: twins
 *  call twins, so a function whose callee samples stays on). An entry of SAMPLER_THRESHOLD_BELOW_UNSAMPLED with a
 *  pair (entry, SAMPLER_THRESHOLD_CALLEE) names its function's dispatch: INT64_MIN when that function is off. */
#define SAMPLER_THRESHOLD_DISPATCH 0xfffffffffffffffdull
/** The second word of a pair that names another entry of the thresholds, not a site (see above). */
#define SAMPLER_THRESHOLD_CALLEE 0u

#define SAMPLER_I_C_FIELD(ir_kind, c_type, field_name) c_type field_name;
struct sampler_scheme {
  SAMPLER_SCHEME_FIELDS(SAMPLER_I_C_FIELD)
};
struct sampler_unit {
  SAMPLER_UNIT_FIELDS(SAMPLER_I_C_FIELD)
};

/** Registers a unit: from then on its samples section is part of the report. Call it from the unit's
 *  constructor. Registering a unit twice is harmless. A unit whose abi_version or signature is wrong is
 *  refused with one line on stderr. */
SAMPLER_API void sampler_register_unit(struct sampler_unit* unit);

/** Unregisters a unit and writes its samples (and timestamps) sections into the report now, so that a
 *  dlclose()d plugin reports what it counted (sampler manual, "samples subreport"). Call it from the unit's
 *  destructor. The unit's memory may be unmapped as soon as this returns. */
SAMPLER_API void sampler_unregister_unit(struct sampler_unit* unit);

/** The calling thread's countdown to its next sample: each site decrements it and calls a sampler_take_*()
 *  function when the result is <= 0; that call draws the next geometric countdown. Initial-exec TLS, so the
 *  fast path is a single thread-pointer-relative access and no call. A new thread starts at 1, so its first
 *  site enters the runtime, which seeds the thread's generator (lazy seeding, docs/instrumenting.md section 2). The runtime never
 *  leaves it below 1 (since ABI version 2; version 1 started threads at 0). A site of version 3 subtracts its
 *  weight and tests the result for <= 0; one of version 2 subtracts 1 and may test for == 0. */
extern __thread int64_t sampler_countdown __attribute__((tls_model("initial-exec")));

/** The countdowns a thread's bank holds, at most. Code reads only the entry `banked` names, so a unit built when
 *  the bank held 16 reads a runtime's bank of 32 (and the reverse) correctly. */
#define SAMPLER_BANK_SIZE 32

/** The calling thread's next countdowns, drawn ahead by the runtime (since ABI version 2), so that code counting
 *  its own samples draws without a call: where the countdown reached zero, if `banked` is not 0 the opportunity is
 *  sampled, `banked` drops by one and countdowns[banked] (the new `banked`) is the next countdown; if it is 0, call
 *  sampler_take_opportunity(), which refills the bank. The runtime keeps `banked` at 0 while a thread must go
 *  through it (a new thread, sampling off, sparsity 1). The countdowns are those of the configuration in force
 *  when they were drawn: the runtime configures sampling once, at start-up, before any countdown is drawn. */
struct sampler_countdown_bank {
  int64_t banked;                            /**< entries of `countdowns` left, the first ones */
  int64_t countdowns[SAMPLER_BANK_SIZE];     /**< used from the last of them down */
};
extern __thread struct sampler_countdown_bank sampler_bank __attribute__((tls_model("initial-exec")));

/* ----- The slow path: called only when a site's countdown reached zero. -------------------------------------
 * Each first decides whether this opportunity is sampled (always, once the thread is seeded; the first call of a
 * new thread draws its first countdown), then records the observation, then the timestamps of the site if the
 * scheme has them. Out-of-range sites or columns are ignored. */


/** The decision alone, for code that counts its own samples: the countdown reached zero (the caller stored it:
 *  since version 3, the value the site left, <= 0, which tells a new thread's first site its weight),
 *  and this returns 1 if the opportunity is sampled, 0 if not (a new thread's first opportunity whose first
 *  countdown lies further on, or sampling off); either way it has set the next countdown. The caller then adds one
 *  to column `column` of site `site`, values[site * columns + column], with a relaxed atomic load and store (not a
 *  read-modify-write: see docs/instrumenting.md, section 4); schemes with timestamps call sampler_take_*() instead.
 *  Since ABI version 2. */
SAMPLER_API int sampler_take_opportunity(void);
/* On x86-64 sampler_take_opportunity() also keeps every general register but r11 (and rax, its result): LLVM's
 * preserve_most convention, which sampler-cc's calls use to keep their values in registers across it. A caller
 * relying on that must not call it through a lazily bound PLT entry (glibc's lazy resolver does not keep r10):
 * sampler-cc calls it through the GOT (nonlazybind). Declared here with the ordinary convention, which it also
 * serves. */

/** Counts one observation in column `column` of `site` (every counter scheme, and generic N-tuples). */
SAMPLER_API void sampler_take_counter(struct sampler_scheme* scheme, uint32_t site, uint32_t column);
/** returns: counts the sign of a signed return value (columns: negative, zero, positive). */
SAMPLER_API void sampler_take_sign(struct sampler_scheme* scheme, uint32_t site, int64_t value);
/** returns, unsigned or pointer values: zero or positive. */
SAMPLER_API void sampler_take_sign_unsigned(struct sampler_scheme* scheme, uint32_t site, uint64_t value);
/** scalar-pairs: counts how `left` compares with `right` (columns: less, equal, greater). */
SAMPLER_API void sampler_take_compare(struct sampler_scheme* scheme, uint32_t site, int64_t left, int64_t right);
/** scalar-pairs over unsigned values or pointers. */
SAMPLER_API void sampler_take_compare_unsigned(struct sampler_scheme* scheme, uint32_t site, uint64_t left,
                                               uint64_t right);
/** scalar-pairs: the `count` sites first_site, first_site + 1, ... of one assignment, `value` against others[0],
 *  others[1], ... Called in place of their `count` fast paths, when the countdown is not above `count`: each
 *  site decrements the countdown and is taken as by sampler_take_compare() when it reaches zero, in order, so
 *  the same sites sample as with one check each. One call instead of `count` keeps a compiler's code small
 *  (sampler-cc uses it for the pairs of an assignment). */
SAMPLER_API void sampler_take_compares(struct sampler_scheme* scheme, uint32_t first_site, uint32_t count,
                                       int64_t value, const int64_t* others);
/** sampler_take_compares() over unsigned values or pointers (as sampler_take_compare_unsigned()). */
SAMPLER_API void sampler_take_compares_unsigned(struct sampler_scheme* scheme, uint32_t first_site, uint32_t count,
                                                uint64_t value, const uint64_t* others);
/** sampler_take_compares() with the constant operands apart: the last constants[0] sites compare `value` with
 *  constants[1], constants[2], ..., the ones before with variables[0], variables[1], ... A compiler keeps each
 *  assignment's constants in read-only data (shared by the assignments that have the same) and stores only the
 *  variables: most operands of pairs are a function's constants (sampler-cc uses it). */
SAMPLER_API void sampler_take_compares_constants(struct sampler_scheme* scheme, uint32_t first_site, uint32_t count,
                                                 int64_t value, const int64_t* variables, const int64_t* constants);
/** sampler_take_compares_constants() over unsigned values or pointers. */
SAMPLER_API void sampler_take_compares_constants_unsigned(struct sampler_scheme* scheme, uint32_t first_site,
                                                          uint32_t count, uint64_t value, const uint64_t* variables,
                                                          const uint64_t* constants);
/** float-kinds: counts the kind of `value` among the nine of sampler_float_kind (classified in its own type). */
SAMPLER_API void sampler_take_float_kind(struct sampler_scheme* scheme, uint32_t site, float value);
SAMPLER_API void sampler_take_double_kind(struct sampler_scheme* scheme, uint32_t site, double value);
SAMPLER_API void sampler_take_long_double_kind(struct sampler_scheme* scheme, uint32_t site, long double value);
/** atoms: counts whether the previous sampled access to `address` came from this thread (column 0) or from
 *  another thread (column 1). The first sampled access to an address counts as this thread's. */
SAMPLER_API void sampler_take_atom(struct sampler_scheme* scheme, uint32_t site, const volatile void* address);
/** bounds: widens the site's [min, max] to include `value` (the value converted to 64 bits: sign-extended for
 *  signed types, zero-extended for unsigned types and pointers). */
SAMPLER_API void sampler_take_bound(struct sampler_scheme* scheme, uint32_t site, uint64_t value);

/** True if the calling thread should sample this opportunity; for code that records through its own means.
 *  Equivalent to the fast path followed by the slow-path decision. */
SAMPLER_API int sampler_sample_now(void);

/* ----- Classification helpers (pure functions, no sampling). ------------------------------------------------ */

/** The nine float kinds, in the column order of the float-kinds scheme. */
enum sampler_float_kind {
  SAMPLER_FLOAT_NEGATIVE_INFINITE = 0,
  SAMPLER_FLOAT_NEGATIVE_NORMAL = 1,
  SAMPLER_FLOAT_NEGATIVE_SUBNORMAL = 2,
  SAMPLER_FLOAT_NEGATIVE_ZERO = 3,
  SAMPLER_FLOAT_NAN = 4,
  SAMPLER_FLOAT_POSITIVE_ZERO = 5,
  SAMPLER_FLOAT_POSITIVE_SUBNORMAL = 6,
  SAMPLER_FLOAT_POSITIVE_NORMAL = 7,
  SAMPLER_FLOAT_POSITIVE_INFINITE = 8
};

SAMPLER_API uint32_t sampler_classify_float(float value);
SAMPLER_API uint32_t sampler_classify_double(double value);
SAMPLER_API uint32_t sampler_classify_long_double(long double value);

/** The column of a returns site: 0 negative, 1 zero, 2 positive. */
static inline uint32_t sampler_classify_sign(int64_t value) { return (uint32_t)((value > 0) - (value < 0) + 1); }

/** The column of a scalar-pairs site: 0 left < right, 1 equal, 2 left > right. */
static inline uint32_t sampler_classify_compare(int64_t left, int64_t right) {
  return (uint32_t)((left > right) - (left < right) + 1);
}

/** The column of a g-object-unref site, from what the instrumented code sees just before g_object_unref(object):
 *  0 reference count 0, 1 reference count 1 (the object is about to be finalized), 2 more than one reference,
 *  3 not a GObject at all. With GLib: sampler_classify_g_object_unref(G_IS_OBJECT(p), G_IS_OBJECT(p) ?
 *  ((GObject*) p)->ref_count : 0). */
static inline uint32_t sampler_classify_g_object_unref(int is_object, uint32_t ref_count) {
  if (!is_object) return 3;
  return ref_count == 0 ? 0 : ref_count == 1 ? 1 : 2;
}

/* ----- Control. ---------------------------------------------------------------------------------------------- */

/** Writes the report now, as at normal exit, and ends it: later unregistrations write nothing. Lets a program
 *  that leaves through _exit() (or execve()) keep its report. Does nothing in a forked child or without a
 *  report destination, or if the report was already written. */
SAMPLER_API void sampler_finish_report(void);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLER_ABI_H */
