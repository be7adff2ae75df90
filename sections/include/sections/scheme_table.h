// The one table of schemes: every fact about a scheme that more than one part needs, in one row per scheme.
// The driver (its `all`, its default and its --help), the plugin (which schemes it instruments, in which order, with
// how many counters), sections/ (known_schemes(): static fields and counters, docs/formats.md section 2) and
// analysis/ (predicate kinds and words) all read it. tests/sections/scheme_table_test.cpp holds the runtime's
// sampler/unit.h and docs/formats.md to it, tests/instrumentor/driver_test.cpp the driver's --help,
// docs/instrumenting.md and sampler-cc(1).
// Header-only, without dependencies, so that the plugin and the driver include it without linking sections/.
//
// Adding a scheme: one row here, one finder of its sites in the plugin, one slow path (docs/architecture.md,
// "Adding a scheme").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sampler {

/// How a scheme's counters become predicates (analysis/predicates.h).
enum class PredicateKind : uint8_t {
  kPerCounter,    ///< one predicate per counter
  kSixRelations,  ///< returns, scalar-pairs: < <= > >= == != from the counters (<, ==, >)
  kBounds,        ///< no predicates (a minimum and a maximum are not predicates)
};

// SAMPLER_SCHEME_TABLE(ROW) calls ROW once per scheme, in the order of a unit's scheme table (docs/decisions.md,
// "Scheme order"), which is also the order `all` lists them in:
//   ROW(id, name, static fields, counters, predicate kind, instrumented, in `all`, default, labels, predicate)
//   id            the C++ name of its SchemeId
//   name          as in site text, reports and -fsampler-schemes=
//   static fields its own fields after the 4 common ones (docs/formats.md section 2)
//   counters      per site in a samples section
//   instrumented  sampler-cc finds its sites (data is only for units instrumented by hand)
//   in `all`      -fsampler-schemes=all includes it (atoms, for concurrency bugs only, is asked for by name)
//   default       0, or its place in sampler-cc's default list (the original sampler's order)
//   labels        its counters' names, '|'-separated
//   predicate     a predicate in words: %0, %3 the site's own fields, %F its function, %L the counter's label,
//                 %R the relation (kSixRelations); a predicate with %L or %R exists only where the label does.
//                 Empty: none (a predicate without words is named "SCHEME column N").
// An X-macro, as compiler-rt's InstrProfData.inc, so that the enum, the array and the bitset come from one list.
#define SAMPLER_SCHEME_TABLE(ROW)                                                                                    \
  ROW(kFunctionEntries, "function-entries", 0, 1, kPerCounter, true, true, 4, "reached", "%F() reached")           \
  ROW(kBranches, "branches", 1, 2, kPerCounter, true, true, 1, "false|true", "(%0) is %L")                          \
  ROW(kReturns, "returns", 1, 3, kSixRelations, true, true, 2, "negative|zero|positive", "%0() %R 0")              \
  ROW(kScalarPairs, "scalar-pairs", 5, 3, kSixRelations, true, true, 3, "less|equal|greater", "%0 %R %3")           \
  ROW(kFloatKinds, "float-kinds", 3, 9, kPerCounter, true, true, 0,                                                  \
      "-inf|negative normal|negative subnormal|-0|NaN|+0|positive subnormal|positive normal|+inf", "%0 is %L")      \
  ROW(kBounds, "bounds", 3, 2, kBounds, true, true, 0, "min|max", "")                                                \
  ROW(kGObjectUnref, "g-object-unref", 1, 4, kPerCounter, true, true, 0,                                             \
      "refcount 0|refcount 1|refcount > 1|not a GObject", "%0 %L")                                                   \
  ROW(kCoverage, "coverage", 0, 1, kPerCounter, true, true, 0, "reached", "reached")                                \
  ROW(kAtoms, "atoms", 2, 2, kPerCounter, true, false, 0, "accessed by the same thread|accessed by another thread", \
      "%0 %L")                                                                                                       \
  ROW(kData, "data", 0, 1, kPerCounter, false, false, 0, "reached", "reached")

/// One row of the table.
struct SchemeRow {
  std::string_view name;
  int static_fields;
  int counters;
  PredicateKind predicates;
  bool instrumented;  ///< sampler-cc finds its sites
  bool in_all;        ///< -fsampler-schemes=all includes it
  int default_place;  ///< 0, or 1 + its index in sampler-cc's default list
  std::string_view labels;     ///< the counters' names, '|'-separated
  std::string_view predicate;  ///< the predicate in words (see the table's legend)
};

/// A scheme by its place in the table.
enum class SchemeId : uint8_t {
#define SAMPLER_SCHEME_ID(id, ...) id,
  SAMPLER_SCHEME_TABLE(SAMPLER_SCHEME_ID)
#undef SAMPLER_SCHEME_ID
};

inline constexpr std::array<SchemeRow, 0
#define SAMPLER_SCHEME_COUNT(...) +1
                                           SAMPLER_SCHEME_TABLE(SAMPLER_SCHEME_COUNT)
#undef SAMPLER_SCHEME_COUNT
                            >
    kSchemeTable = {{
#define SAMPLER_SCHEME_ROW(id, name, fields, counters, kind, instrumented, all, place, labels, predicate) \
  {name, fields, counters, PredicateKind::kind, instrumented, all, place, labels, predicate},
        SAMPLER_SCHEME_TABLE(SAMPLER_SCHEME_ROW)
#undef SAMPLER_SCHEME_ROW
    }};

inline constexpr size_t kSchemeCount = kSchemeTable.size();

/// The row of a scheme.
constexpr const SchemeRow& scheme_row(SchemeId id) { return kSchemeTable[static_cast<size_t>(id)]; }

/// The scheme named `name`, if the table has it.
constexpr bool find_scheme_id(std::string_view name, SchemeId& id) {
  for (size_t i = 0; i < kSchemeCount; ++i)
    if (kSchemeTable[i].name == name) {
      id = static_cast<SchemeId>(i);
      return true;
    }
  return false;
}

/// A set of schemes, one bit per SchemeId: what the plugin tests at every site it finds.
class SchemeSet {
 public:
  constexpr bool has(SchemeId id) const { return (bits_ >> static_cast<unsigned>(id)) & 1u; }
  constexpr void add(SchemeId id) { bits_ |= uint32_t{1} << static_cast<unsigned>(id); }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool operator==(const SchemeSet&) const = default;

 private:
  static_assert(kSchemeCount <= 32);
  uint32_t bits_ = 0;
};

/// Splits a '|'-separated label list: the label of counter `index`, empty past the last.
constexpr std::string_view scheme_label(std::string_view labels, size_t index) {
  for (size_t start = 0, i = 0;; ++i) {
    size_t bar = labels.find('|', start);
    if (i == index) return labels.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start);
    if (bar == std::string_view::npos) return {};
    start = bar + 1;
  }
}

/// sampler-cc's default schemes, comma-separated in the default list's order.
inline std::string default_scheme_list() {
  std::string list;
  for (int place = 1;; ++place) {
    bool found = false;
    for (const SchemeRow& row : kSchemeTable)
      if (row.default_place == place) {
        list += (list.empty() ? "" : ",") + std::string(row.name);
        found = true;
      }
    if (!found) return list;
  }
}

/// Walks a -fsampler-schemes= list as the driver and the plugin both read it: comma-separated names of schemes
/// sampler-cc instruments, empty items skipped, `all` for every scheme `all` includes (in the table's order).
/// Calls on_scheme(SchemeId) for each, repeats included. Returns false at the first name it does not know, which
/// it leaves in `unknown`.
template <typename OnScheme>
bool walk_scheme_list(std::string_view list, OnScheme&& on_scheme, std::string_view& unknown) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (name.empty()) continue;
    if (name == "all") {
      for (size_t i = 0; i < kSchemeCount; ++i)
        if (kSchemeTable[i].instrumented && kSchemeTable[i].in_all) on_scheme(static_cast<SchemeId>(i));
      continue;
    }
    SchemeId id{};
    if (!find_scheme_id(name, id) || !scheme_row(id).instrumented) {
      unknown = name;
      return false;
    }
    on_scheme(id);
  }
  return true;
}

}  // namespace sampler
