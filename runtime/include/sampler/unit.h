/* sampler runtime: declaring an instrumented unit by hand, in ONE table, and recording at its sites by name.
 *
 * A unit's static site text (docs/formats.md section 2, written into the non-allocated `.debug_site_info` section) and
 * its counter tables come from the same list, so their order can never disagree. Usage, once per translation unit:
 *
 *     #define SAMPLER_UNIT_SIGNATURE "0123456789abcdef0123456789abcdef"    // 32 lower-case hex digits
 *     #define MY_SITES(SCHEME, SITE, BOUND, END)                                                  \
 *       SCHEME(branches, none)                                                                     \
 *         SITE(negative, "calc.c", "12", "parse", "3", "value < 0")                                \
 *       END(branches)                                                                              \
 *       SCHEME(bounds, first)                                                                      \
 *         BOUND(width, SAMPLER_BOUND_I32, "calc.c", "20", "parse", "5", "width", "local", "direct") \
 *       END(bounds)
 *     SAMPLER_DEFINE_UNIT(MY_SITES)
 *     ...
 *     if (SAMPLER_BRANCH(negative, value < 0)) ...
 *     width = compute(); SAMPLER_BOUND(width, width);
 *
 * SCHEME(id, timestamps): id is the scheme's name with '-' written '_' (branches, returns, scalar_pairs,
 *   function_entries, float_kinds, atoms, g_object_unref, coverage, data, bounds, or your own: define
 *   SAMPLER_SCHEME_NAME_<id> "its-name" and SAMPLER_COLUMNS_<id> N first). timestamps is none, first, last or
 *   both: whether the report also carries the logical time of each site's first and/or last sample.
 * SITE(name, fields...): a counter site. name is unique within the scheme; the fields are string literals, the
 *   four common ones (file, line, function, CFG node) then the scheme's own (docs/formats.md section 2), tab-joined.
 * BOUND(name, type, fields...): a bounds site; type is an enum sampler_bound_type value.
 * END(id): closes the scheme.
 * The fields are placed inside an assembler string: a '"' or '\' in a field must be written "\\\"" or "\\\\".
 *
 * Define SAMPLER_UNINSTRUMENTED to compile the same source without instrumentation: the recording macros then
 * only evaluate their operands, and no table, site text or constructor is emitted (benchmarks and baselines).
 */
#ifndef SAMPLER_UNIT_H
#define SAMPLER_UNIT_H

#include <stdint.h>

#include "sampler/abi.h"
#include "sampler/record.h"

/* ----- The schemes docs/formats.md section 2 knows: name and counters per site. ------------------------------ */
#define SAMPLER_SCHEME_NAME_atoms "atoms"
#define SAMPLER_COLUMNS_atoms 2
#define SAMPLER_SCHEME_NAME_bounds "bounds"
#define SAMPLER_COLUMNS_bounds 2
#define SAMPLER_SCHEME_NAME_branches "branches"
#define SAMPLER_COLUMNS_branches 2
#define SAMPLER_SCHEME_NAME_coverage "coverage"
#define SAMPLER_COLUMNS_coverage 1
#define SAMPLER_SCHEME_NAME_data "data"
#define SAMPLER_COLUMNS_data 1
#define SAMPLER_SCHEME_NAME_float_kinds "float-kinds"
#define SAMPLER_COLUMNS_float_kinds 9
#define SAMPLER_SCHEME_NAME_function_entries "function-entries"
#define SAMPLER_COLUMNS_function_entries 1
#define SAMPLER_SCHEME_NAME_g_object_unref "g-object-unref"
#define SAMPLER_COLUMNS_g_object_unref 4
#define SAMPLER_SCHEME_NAME_returns "returns"
#define SAMPLER_COLUMNS_returns 3
#define SAMPLER_SCHEME_NAME_scalar_pairs "scalar-pairs"
#define SAMPLER_COLUMNS_scalar_pairs 3

/* ----- Preprocessor helpers (internal). ---------------------------------------------------------------------- */
#define SAMPLER_I_CAT(a, b) SAMPLER_I_CAT_(a, b)
#define SAMPLER_I_CAT_(a, b) a##b
#define SAMPLER_I_IGNORE(...)
#define SAMPLER_I_NARGS(...) \
  SAMPLER_I_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define SAMPLER_I_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
/* Joins string literals with an assembler tab escape between them. */
#define SAMPLER_I_JOIN(...) SAMPLER_I_CAT(SAMPLER_I_JOIN_, SAMPLER_I_NARGS(__VA_ARGS__))(__VA_ARGS__)
#define SAMPLER_I_JOIN_1(a) a
#define SAMPLER_I_JOIN_2(a, ...) a "\\t" SAMPLER_I_JOIN_1(__VA_ARGS__)
#define SAMPLER_I_JOIN_3(a, ...) a "\\t" SAMPLER_I_JOIN_2(__VA_ARGS__)
#define SAMPLER_I_JOIN_4(a, ...) a "\\t" SAMPLER_I_JOIN_3(__VA_ARGS__)
#define SAMPLER_I_JOIN_5(a, ...) a "\\t" SAMPLER_I_JOIN_4(__VA_ARGS__)
#define SAMPLER_I_JOIN_6(a, ...) a "\\t" SAMPLER_I_JOIN_5(__VA_ARGS__)
#define SAMPLER_I_JOIN_7(a, ...) a "\\t" SAMPLER_I_JOIN_6(__VA_ARGS__)
#define SAMPLER_I_JOIN_8(a, ...) a "\\t" SAMPLER_I_JOIN_7(__VA_ARGS__)
#define SAMPLER_I_JOIN_9(a, ...) a "\\t" SAMPLER_I_JOIN_8(__VA_ARGS__)
#define SAMPLER_I_JOIN_10(a, ...) a "\\t" SAMPLER_I_JOIN_9(__VA_ARGS__)
#define SAMPLER_I_JOIN_11(a, ...) a "\\t" SAMPLER_I_JOIN_10(__VA_ARGS__)
#define SAMPLER_I_JOIN_12(a, ...) a "\\t" SAMPLER_I_JOIN_11(__VA_ARGS__)
#define SAMPLER_I_JOIN_13(a, ...) a "\\t" SAMPLER_I_JOIN_12(__VA_ARGS__)
#define SAMPLER_I_JOIN_14(a, ...) a "\\t" SAMPLER_I_JOIN_13(__VA_ARGS__)
#define SAMPLER_I_JOIN_15(a, ...) a "\\t" SAMPLER_I_JOIN_14(__VA_ARGS__)
#define SAMPLER_I_JOIN_16(a, ...) a "\\t" SAMPLER_I_JOIN_15(__VA_ARGS__)

#ifdef __cplusplus
#define SAMPLER_I_STATIC_ASSERT(condition, message) static_assert(condition, message)
#else
#define SAMPLER_I_STATIC_ASSERT(condition, message) _Static_assert(condition, message)
#endif

/* Pass 1, the scheme indexes: enum { sampler_unit_index_<id>, ..., sampler_unit_scheme_count }. */
#define SAMPLER_I_INDEX_SCHEME(id, timestamps) sampler_unit_index_##id,

/* Pass 2, the sites: every site name is an enumerator whose value carries its scheme's index in the top bits and
   its index within the scheme in the low 24 bits, so a recording macro can check at compile time that the site
   belongs to the scheme it records for. sampler_unit_count_<id> is the scheme's number of sites. */
#define SAMPLER_I_SITE_SCHEME(id, timestamps) enum { sampler_unit_base_##id = (sampler_unit_index_##id << 24) - 1,
#define SAMPLER_I_SITE_SITE(name, ...) sampler_unit_site_##name,
#define SAMPLER_I_SITE_BOUND(name, type, ...) sampler_unit_site_##name,
#define SAMPLER_I_SITE_END(id)                                                   \
  sampler_unit_end_##id                                                          \
  }                                                                              \
  ;                                                                              \
  enum { sampler_unit_count_##id = sampler_unit_end_##id - sampler_unit_base_##id - 1 };

/* Pass 3, storage: the values (zero-initialised: counters start at 0, bounds at their identity, see the docs),
   the optional timestamps, and the bound types (a sentinel 0 ends the list, so a scheme without BOUND entries
   has one element). */
#define SAMPLER_I_TS_none(id)
#define SAMPLER_I_TS_first(id) static uint64_t sampler_unit_first_##id[sampler_unit_count_##id + 1];
#define SAMPLER_I_TS_last(id) static uint64_t sampler_unit_last_##id[sampler_unit_count_##id + 1];
#define SAMPLER_I_TS_both(id) SAMPLER_I_TS_first(id) SAMPLER_I_TS_last(id)
#define SAMPLER_I_FIRST_none(id) 0
#define SAMPLER_I_FIRST_first(id) sampler_unit_first_##id
#define SAMPLER_I_FIRST_last(id) 0
#define SAMPLER_I_FIRST_both(id) sampler_unit_first_##id
#define SAMPLER_I_LAST_none(id) 0
#define SAMPLER_I_LAST_first(id) 0
#define SAMPLER_I_LAST_last(id) sampler_unit_last_##id
#define SAMPLER_I_LAST_both(id) sampler_unit_last_##id
#define SAMPLER_I_STORE_SCHEME(id, timestamps)                                                          \
  static uint64_t sampler_unit_values_##id[sampler_unit_count_##id * SAMPLER_COLUMNS_##id + 1];         \
  SAMPLER_I_TS_##timestamps(id) static const uint8_t sampler_unit_types_##id[] = {
#define SAMPLER_I_STORE_SITE(name, ...)
#define SAMPLER_I_STORE_BOUND(name, type, ...) type,
#define SAMPLER_I_STORE_END(id)                                                                         \
  0                                                                                                     \
  }                                                                                                     \
  ;                                                                                                     \
  SAMPLER_I_STATIC_ASSERT(sizeof(sampler_unit_types_##id) == 1 ||                                       \
                              (sizeof(sampler_unit_types_##id) == sampler_unit_count_##id + 1 &&        \
                               SAMPLER_COLUMNS_##id == 2),                                              \
                          "a scheme mixes SITE and BOUND entries, or bounds do not have 2 columns");

/* Pass 4, the scheme table (one more entry than schemes, so that a unit without schemes still compiles). */
#define SAMPLER_I_TABLE_SCHEME(id, timestamps)                                                          \
  {SAMPLER_SCHEME_NAME_##id,                                                                            \
   (uint32_t)sampler_unit_count_##id,                                                                   \
   SAMPLER_COLUMNS_##id,                                                                                \
   sizeof(sampler_unit_types_##id) > 1 ? SAMPLER_SCHEME_BOUNDS : SAMPLER_SCHEME_COUNTERS,               \
   0,                                                                                                   \
   sampler_unit_values_##id,                                                                            \
   sampler_unit_types_##id,                                                                             \
   SAMPLER_I_FIRST_##timestamps(id),                                                                    \
   SAMPLER_I_LAST_##timestamps(id)},

/* Pass 5, the site text: assembler lines that append the unit's <sites> sections to .debug_site_info. */
#define SAMPLER_I_TEXT_SCHEME(id, timestamps) \
  "\t.ascii \"<sites unit=\\\"" SAMPLER_UNIT_SIGNATURE "\\\" scheme=\\\"" SAMPLER_SCHEME_NAME_##id "\\\">\\n\"\n"
#define SAMPLER_I_TEXT_SITE(name, ...) "\t.ascii \"" SAMPLER_I_JOIN(__VA_ARGS__) "\\n\"\n"
#define SAMPLER_I_TEXT_BOUND(name, type, ...) "\t.ascii \"" SAMPLER_I_JOIN(__VA_ARGS__) "\\n\"\n"
#define SAMPLER_I_TEXT_END(id) "\t.ascii \"</sites>\\n\"\n"

#ifndef SAMPLER_UNINSTRUMENTED

/** Defines the unit from its site list (see the top of this file). Use once per translation unit, at file scope,
 *  after defining SAMPLER_UNIT_SIGNATURE. */
#define SAMPLER_DEFINE_UNIT(SITES)                                                                      \
  enum { SITES(SAMPLER_I_INDEX_SCHEME, SAMPLER_I_IGNORE, SAMPLER_I_IGNORE, SAMPLER_I_IGNORE)            \
             sampler_unit_scheme_count };                                                               \
  SITES(SAMPLER_I_SITE_SCHEME, SAMPLER_I_SITE_SITE, SAMPLER_I_SITE_BOUND, SAMPLER_I_SITE_END)           \
  SITES(SAMPLER_I_STORE_SCHEME, SAMPLER_I_STORE_SITE, SAMPLER_I_STORE_BOUND, SAMPLER_I_STORE_END)       \
  static struct sampler_scheme sampler_unit_schemes[sampler_unit_scheme_count + 1] = {                  \
      SITES(SAMPLER_I_TABLE_SCHEME, SAMPLER_I_IGNORE, SAMPLER_I_IGNORE, SAMPLER_I_IGNORE){0, 0, 0, 0, 0, \
                                                                                          0, 0, 0, 0}}; \
  static struct sampler_unit sampler_unit_descriptor = {SAMPLER_ABI_VERSION, sampler_unit_scheme_count, \
                                                        SAMPLER_UNIT_SIGNATURE, sampler_unit_schemes, 0, 0, \
                                                        0, 0, 0, 0, 0, 0, 0}; \
  __asm__(".pushsection .debug_site_info,\"\",@progbits\n" SITES(                                       \
      SAMPLER_I_TEXT_SCHEME, SAMPLER_I_TEXT_SITE, SAMPLER_I_TEXT_BOUND, SAMPLER_I_TEXT_END) ".popsection\n"); \
  /* Priority 101, the earliest allowed: registered before any other constructor of the object runs its sites,  \
     unregistered (and reported) after every other destructor of the object. */                         \
  __attribute__((constructor(101))) static void sampler_unit_register(void) {                           \
    sampler_register_unit(&sampler_unit_descriptor);                                                    \
  }                                                                                                     \
  __attribute__((destructor(101))) static void sampler_unit_unregister(void) {                          \
    sampler_unregister_unit(&sampler_unit_descriptor);                                                  \
  }                                                                                                     \
  SAMPLER_I_STATIC_ASSERT(sizeof(SAMPLER_UNIT_SIGNATURE) == 33, "the unit signature is 32 hex digits")

/* The scheme table of scheme `id` and the index of site `name` in it, checked to belong to that scheme. */
#define SAMPLER_I_SCHEME(id) (&sampler_unit_schemes[sampler_unit_index_##id])
#define SAMPLER_I_SITE(id, name)                                                   \
  ((uint32_t)(sampler_unit_site_##name & 0xffffff) +                               \
   0 * sizeof(char[(sampler_unit_site_##name >> 24) == sampler_unit_index_##id ? 1 : -1]))

/* ----- Recording at a site, by name. Each is an expression. ----------------------------------------------- */

/** branches: records `condition` and yields it as 0 or 1, so it can stand in the `if` it instruments. */
#define SAMPLER_BRANCH(name, condition) \
  sampler_branch(SAMPLER_I_SCHEME(branches), SAMPLER_I_SITE(branches, name), (condition) ? 1 : 0)
/** returns: the sign of a signed integer value. */
#define SAMPLER_RETURN(name, value) \
  sampler_return_signed(SAMPLER_I_SCHEME(returns), SAMPLER_I_SITE(returns, name), (int64_t)(value))
/** returns: an unsigned integer value (zero or positive). */
#define SAMPLER_RETURN_UNSIGNED(name, value) \
  sampler_return_unsigned(SAMPLER_I_SCHEME(returns), SAMPLER_I_SITE(returns, name), (uint64_t)(value))
/** returns: a pointer (null is zero, anything else positive). */
#define SAMPLER_RETURN_POINTER(name, pointer) \
  sampler_return_unsigned(SAMPLER_I_SCHEME(returns), SAMPLER_I_SITE(returns, name), (uint64_t)(uintptr_t)(pointer))
/** scalar-pairs: how a signed `left` compares with `right`. */
#define SAMPLER_SCALAR_PAIR(name, left, right)                                                   \
  sampler_pair_signed(SAMPLER_I_SCHEME(scalar_pairs), SAMPLER_I_SITE(scalar_pairs, name), (int64_t)(left), \
                      (int64_t)(right))
/** scalar-pairs over unsigned integers. */
#define SAMPLER_SCALAR_PAIR_UNSIGNED(name, left, right)                                           \
  sampler_pair_unsigned(SAMPLER_I_SCHEME(scalar_pairs), SAMPLER_I_SITE(scalar_pairs, name),      \
                        (uint64_t)(left), (uint64_t)(right))
/** scalar-pairs over pointers. */
#define SAMPLER_SCALAR_PAIR_POINTER(name, left, right)                                            \
  sampler_pair_unsigned(SAMPLER_I_SCHEME(scalar_pairs), SAMPLER_I_SITE(scalar_pairs, name),      \
                        (uint64_t)(uintptr_t)(left), (uint64_t)(uintptr_t)(right))
/** function-entries: the function was entered. */
#define SAMPLER_FUNCTION_ENTRY(name) \
  sampler_count(SAMPLER_I_SCHEME(function_entries), SAMPLER_I_SITE(function_entries, name), 0)
/** float-kinds: the kind of a float, double or long double value, classified in its own type. */
#define SAMPLER_FLOAT_KIND(name, value) \
  sampler_float_kind(SAMPLER_I_SCHEME(float_kinds), SAMPLER_I_SITE(float_kinds, name), (value))
/** atoms: an access to shared memory at `address`. */
#define SAMPLER_ATOM(name, address) \
  sampler_atom(SAMPLER_I_SCHEME(atoms), SAMPLER_I_SITE(atoms, name), (const volatile void*)(address))
/** g-object-unref: the state of the object about to be unreferenced (see sampler_classify_g_object_unref). */
#define SAMPLER_G_OBJECT_UNREF(name, is_object, ref_count)                                        \
  sampler_count(SAMPLER_I_SCHEME(g_object_unref), SAMPLER_I_SITE(g_object_unref, name),          \
                sampler_classify_g_object_unref((is_object), (uint32_t)(ref_count)))
/** coverage: the site was reached. */
#define SAMPLER_COVERAGE(name) sampler_count(SAMPLER_I_SCHEME(coverage), SAMPLER_I_SITE(coverage, name), 0)
/** data: the site's datum was observed. */
#define SAMPLER_DATA(name) sampler_count(SAMPLER_I_SCHEME(data), SAMPLER_I_SITE(data, name), 0)
/** A generic N-tuple scheme `id` (see SCHEME): one observation in `column` (0 <= column < N). */
#define SAMPLER_TUPLE(id, name, column) \
  sampler_count(SAMPLER_I_SCHEME(id), SAMPLER_I_SITE(id, name), (uint32_t)(column))
/** bounds: a value assigned at a BOUND site (integer or pointer). */
#define SAMPLER_BOUND(name, value) \
  sampler_bound(SAMPLER_I_SCHEME(bounds), SAMPLER_I_SITE(bounds, name), (uint64_t)(intptr_t)(value))

#else /* SAMPLER_UNINSTRUMENTED: the same source, with operands evaluated and nothing recorded. */

#define SAMPLER_DEFINE_UNIT(SITES)                                                                      \
  enum { SITES(SAMPLER_I_INDEX_SCHEME, SAMPLER_I_IGNORE, SAMPLER_I_IGNORE, SAMPLER_I_IGNORE)            \
             sampler_unit_scheme_count };                                                               \
  SITES(SAMPLER_I_SITE_SCHEME, SAMPLER_I_SITE_SITE, SAMPLER_I_SITE_BOUND, SAMPLER_I_SITE_END)           \
  SAMPLER_I_STATIC_ASSERT(sizeof(SAMPLER_UNIT_SIGNATURE) == 33, "the unit signature is 32 hex digits")
#define SAMPLER_BRANCH(name, condition) ((condition) ? 1 : 0)
#define SAMPLER_RETURN(name, value) ((void)(value))
#define SAMPLER_RETURN_UNSIGNED(name, value) ((void)(value))
#define SAMPLER_RETURN_POINTER(name, pointer) ((void)(pointer))
#define SAMPLER_SCALAR_PAIR(name, left, right) ((void)(left), (void)(right))
#define SAMPLER_SCALAR_PAIR_UNSIGNED(name, left, right) ((void)(left), (void)(right))
#define SAMPLER_SCALAR_PAIR_POINTER(name, left, right) ((void)(left), (void)(right))
#define SAMPLER_FUNCTION_ENTRY(name) ((void)0)
#define SAMPLER_FLOAT_KIND(name, value) ((void)(value))
#define SAMPLER_ATOM(name, address) ((void)(address))
#define SAMPLER_G_OBJECT_UNREF(name, is_object, ref_count) ((void)(is_object), (void)(ref_count))
#define SAMPLER_COVERAGE(name) ((void)0)
#define SAMPLER_DATA(name) ((void)0)
#define SAMPLER_TUPLE(id, name, column) ((void)(column))
#define SAMPLER_BOUND(name, value) ((void)(value))

#endif /* SAMPLER_UNINSTRUMENTED */

#endif /* SAMPLER_UNIT_H */
