// The table of schemes and their columns has one source, sections/site_info.h's known_schemes(); the places that
// repeat it must agree with it (docs/reliability.md, "The code, read as its next maintainer would"): the runtime's
// sampler/unit.h, which names each scheme and its counters for instrumented code (SAMPLER_SCHEME_NAME_<id>,
// SAMPLER_COLUMNS_<id>), and the table of docs/formats.md section 2. Both are read as text, so a scheme added to
// either, or a column count changed, fails here until the table says the same.
#include "sections/site_info.h"

#include "sections/scheme_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace sampler {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// name -> (static fields, counters); -1 where the source does not say.
using Table = std::map<std::string, std::pair<int, int>>;

Table from_library() {
  Table table;
  for (const SchemeInfo& scheme : known_schemes()) {
    table[std::string(scheme.name)] = {scheme.static_fields, scheme.counters};
  }
  return table;
}

TEST(SchemeTable, IsSortedAndFindSchemeAgrees) {
  std::span<const SchemeInfo> schemes = known_schemes();
  ASSERT_EQ(schemes.size(), 10u);  // docs/formats.md section 2 names ten
  EXPECT_TRUE(std::is_sorted(schemes.begin(), schemes.end(),
                             [](const SchemeInfo& a, const SchemeInfo& b) { return a.name < b.name; }));
  for (const SchemeInfo& scheme : schemes) {
    EXPECT_EQ(find_scheme(scheme.name), &scheme);
    EXPECT_EQ(scheme.is_bounds, scheme.name == "bounds");
  }
  EXPECT_EQ(find_scheme("no-such-scheme"), nullptr);
}

TEST(SchemeTable, TheRuntimesUnitHeaderAgrees) {
  const std::string header = read_file(SAMPLER_UNIT_H);
  // #define SAMPLER_SCHEME_NAME_<id> "<name>" and #define SAMPLER_COLUMNS_<id> <counters>
  std::map<std::string, std::string> names;
  std::map<std::string, int> columns;
  const std::regex name_line(R"re(#define SAMPLER_SCHEME_NAME_(\w+) "([^"]+)")re");
  const std::regex columns_line(R"(#define SAMPLER_COLUMNS_(\w+) (\d+))");
  for (std::sregex_iterator it(header.begin(), header.end(), name_line), end; it != end; ++it) {
    names[(*it)[1]] = (*it)[2];
  }
  for (std::sregex_iterator it(header.begin(), header.end(), columns_line), end; it != end; ++it) {
    columns[(*it)[1]] = std::stoi((*it)[2]);
  }
  Table table;
  for (const auto& [id, name] : names) {
    ASSERT_TRUE(columns.count(id)) << "unit.h names scheme " << name << " without SAMPLER_COLUMNS_" << id;
    table[name] = {-1, columns[id]};
    EXPECT_EQ(id, std::regex_replace(name, std::regex("-"), "_")) << "the id of " << name;
  }
  EXPECT_EQ(columns.size(), names.size());
  Table expected = from_library();
  for (auto& [name, fields] : expected) fields.first = -1;  // unit.h does not say
  EXPECT_EQ(table, expected);
}

TEST(SchemeTable, TheFormatsDocumentAgrees) {
  const std::string doc = read_file(SAMPLER_FORMATS_MD);
  // | `atoms` | 2: the lvalue; `read` or `write` | 2 |   (docs/formats.md section 2)
  const std::regex row(R"(\n\| `([a-z-]+)` \| (\d+)[^|\n]*\| (\d+)[^|\n]*\|)");
  Table table;
  for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it) {
    table[(*it)[1]] = {std::stoi((*it)[2]), std::stoi((*it)[3])};
  }
  EXPECT_EQ(table, from_library());
}

// The counters' names docs/formats.md gives in parentheses ("2 (false, true)") are the table's labels.
TEST(SchemeTable, TheFormatsDocumentsCounterNamesAreTheLabels) {
  const std::string doc = read_file(SAMPLER_FORMATS_MD);
  const std::regex row(R"(\n\| `([a-z-]+)` \|[^|\n]*\| \d+ \(([^)\n]*)\) \|)");
  int named = 0;
  for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it) {
    SchemeId id{};
    ASSERT_TRUE(find_scheme_id((*it)[1].str(), id)) << (*it)[1];
    std::string labels = std::regex_replace((*it)[2].str(), std::regex(", "), "|");
    EXPECT_EQ(labels, scheme_row(id).labels) << (*it)[1];
    ++named;
  }
  EXPECT_EQ(named, 3);  // branches, returns, scalar-pairs
}

// Each row is whole: one label per counter, a default only among the schemes sampler-cc instruments, the default
// list's places 1, 2, ... without a gap, and words for every predicate of a scheme that has predicates.
TEST(SchemeTable, EveryRowIsConsistent) {
  std::vector<int> places;
  for (const SchemeRow& row : kSchemeTable) {
    size_t labels = 1;
    for (char c : row.labels) labels += c == '|' ? 1 : 0;
    EXPECT_EQ(labels, static_cast<size_t>(row.counters)) << row.name;
    EXPECT_EQ(scheme_label(row.labels, labels), "") << row.name;
    if (row.default_place != 0) {
      EXPECT_TRUE(row.instrumented && row.in_all) << row.name;
      places.push_back(row.default_place);
    }
    EXPECT_TRUE(!row.in_all || row.instrumented) << row.name;
    EXPECT_EQ(row.predicate.empty(), row.predicates == PredicateKind::kBounds) << row.name;
    if (row.predicates == PredicateKind::kSixRelations) {
      EXPECT_EQ(row.counters, 3) << row.name;
    }
  }
  std::sort(places.begin(), places.end());
  for (size_t i = 0; i < places.size(); ++i) EXPECT_EQ(places[i], static_cast<int>(i + 1));
  EXPECT_EQ(default_scheme_list(), "branches,returns,scalar-pairs,function-entries");
}

// The list the drivers and the plugin both read: `all`, repeats, empty items, and the first unknown name.
TEST(SchemeTable, WalkSchemeList) {
  auto walk = [](std::string_view list, std::string_view& unknown) {
    std::string names;
    bool known = walk_scheme_list(
        list, [&](SchemeId id) { names += (names.empty() ? "" : ",") + std::string(scheme_row(id).name); }, unknown);
    return known ? names : "refused";
  };
  std::string_view unknown;
  EXPECT_EQ(walk("all", unknown),
            "function-entries,branches,returns,scalar-pairs,float-kinds,bounds,g-object-unref,coverage");
  EXPECT_EQ(walk(",atoms,,branches,atoms", unknown), "atoms,branches,atoms");
  EXPECT_EQ(walk("", unknown), "");
  EXPECT_EQ(walk("branches,data,nope", unknown), "refused");
  EXPECT_EQ(unknown, "data");  // in the formats, but no compiler finds its sites
  EXPECT_EQ(walk("branches,Branches", unknown), "refused");
  EXPECT_EQ(unknown, "Branches");
}

}  // namespace
}  // namespace sampler
