// Which predicates a site stands for, and which of them a run observed true (the paper's section 2;
// docs/formats.md section 2 for the schemes and their counters).
//
//   branches            2 predicates: the condition is false, is true (one counter each)
//   returns             6: the value < <= > >= == != 0, from the three counters (< 0, == 0, > 0)
//   scalar-pairs        6: left < <= > >= == != right, from the three counters (<, ==, >)
//   float-kinds         9: one per kind
//   function-entries    1: reached;  coverage, data: 1: reached
//   atoms 2, g-object-unref 4, and schemes of a program's own: one predicate per counter
//   bounds              none (a minimum and a maximum are not predicates)
// A predicate is observed true in a run when its counters (summed over the run's sections) are not all zero;
// its site is observed when any of the site's counters is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sections/scheme_table.h"

namespace sampler::analysis {

/// How a scheme's counters become predicates: kPerCounter, kSixRelations (returns, scalar-pairs: < <= > >= == !=
/// from the counters <, ==, >), kBounds (none). Each known scheme's is in sections/scheme_table.h.
using SchemeKind = PredicateKind;

/// The kind of `scheme` (unknown schemes: kPerCounter).
SchemeKind scheme_kind(std::string_view scheme);

/// At most this many counters per site are read (a scheme of a program's own with more is an error).
inline constexpr size_t kMaxCounters = 32;

/// The number of predicates of a site with `counters` counters.
inline uint32_t predicate_count(SchemeKind kind, size_t counters) {
  switch (kind) {
    case SchemeKind::kPerCounter: return static_cast<uint32_t>(counters);
    case SchemeKind::kSixRelations: return counters == 3 ? 6 : 0;
    case SchemeKind::kBounds: return 0;
  }
  return 0;
}

/// Bit i set when predicate i of the site is true, given which counters are non-zero (bit c for counter c).
constexpr uint32_t true_predicates(SchemeKind kind, uint32_t nonzero_counters) {
  if (kind == SchemeKind::kPerCounter) return nonzero_counters;
  if (kind == SchemeKind::kBounds) return 0;
  // Counters: bit 0 "<", bit 1 "==", bit 2 ">"; predicates in the order < <= > >= == !=.
  bool less = nonzero_counters & 1, equal = nonzero_counters & 2, greater = nonzero_counters & 4;
  return (less ? 1u : 0u) | (less || equal ? 2u : 0u) | (greater ? 4u : 0u) | (equal || greater ? 8u : 0u) |
         (equal ? 16u : 0u) | (less || greater ? 32u : 0u);
}

/// One site as its site information describes it.
struct Site {
  std::string sites_file;  ///< the FILE it came from (resolveSamples' first column)
  std::string unit;
  std::string scheme;
  std::string file, line, function, node;  ///< the four common fields
  std::vector<std::string> fields;         ///< the scheme's own fields
  SchemeKind kind = SchemeKind::kPerCounter;
  uint32_t counters = 0;         ///< counters per samples line
  uint32_t first_predicate = 0;  ///< the id of its predicate 0
  uint32_t predicates = 0;
};

/// Splits one site line (without its line end) into a Site's common and scheme fields.
void parse_site_fields(std::string_view line, Site& site);

/// The predicate in words, built from the site's own text: "(steps > 0) is true", "memcmp() < 0",
/// "known <= length", "share is NaN", "hash_word() reached", "length class 17+" (a field "NAME: a, b, ..." with
/// one label per counter names a program's own scheme's columns), "SCHEME column N" otherwise.
std::string predicate_text(const Site& site, uint32_t index);

}  // namespace sampler::analysis
