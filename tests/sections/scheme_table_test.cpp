// The table of schemes and their columns has one source, sections/site_info.h's known_schemes(); the places that
// repeat it must agree with it (docs/reliability.md, "The code, read as its next maintainer would"): the runtime's
// sampler/unit.h, which names each scheme and its counters for instrumented code (SAMPLER_SCHEME_NAME_<id>,
// SAMPLER_COLUMNS_<id>), and the table of docs/formats.md section 2. Both are read as text, so a scheme added to
// either, or a column count changed, fails here until the table says the same.
#include "sections/site_info.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>

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

}  // namespace
}  // namespace sampler
