// Reading runs (analysis/runs.h) against a reference written the plain way: random samples lines (short and long
// counters, zeros written "0" or "000", CRLF line ends, malformed lines, sections out of order or twice) must give
// each run exactly the observed sites and true predicates that splitting the lines by hand gives.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/predicates.h"
#include "analysis/runs.h"
#include "sections/sites_index.h"

namespace sampler::analysis {
namespace {

struct Unit {
  std::string name, scheme;
  uint32_t counters;
  SchemeKind kind;
};

constexpr uint32_t kSites = 40;

std::string counter_text(std::mt19937_64& random) {
  switch (random() % 20) {
    case 0: return "00";
    case 1: return std::string(1 + random() % 70, '0');  // a long line of zeros
    case 2: return std::to_string(random());              // long, beyond a 64-byte window with the others
    case 3: return "0" + std::to_string(1 + random() % 9);
    default: return random() % 2 ? "0" : std::to_string(1 + random() % 1000);
  }
}

bool nonzero_text(const std::string& text) { return text.find_first_not_of('0') != std::string::npos; }

TEST(ReadRuns, SamplesLinesAgreeWithAPlainReading) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "analysis_reading_test";
  fs::remove_all(dir);
  fs::create_directories(dir / "reports");
  const std::vector<Unit> units = {
      {"000000000000000000000000000000a1", "branches", 2, SchemeKind::kPerCounter},
      {"000000000000000000000000000000a2", "returns", 3, SchemeKind::kSixRelations},
      {"000000000000000000000000000000a3", "mine", 5, SchemeKind::kPerCounter},
  };
  {
    std::string text;
    for (const Unit& unit : units) {
      text += "<sites unit=\"" + unit.name + "\" scheme=\"" + unit.scheme + "\">\n";
      for (uint32_t i = 0; i < kSites; ++i) {
        text += "f.c\t" + std::to_string(i) + "\tfn\t" + std::to_string(i) +
                (unit.scheme == "mine" ? "" : "\tx") + "\n";
      }
      text += "</sites>\n";
    }
    FILE* out = std::fopen((dir / "app.sites").c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fwrite(text.data(), 1, text.size(), out);
    std::fclose(out);
  }
  // Per report: the expected (unit, site) observed and (unit, site, predicate) true.
  using SiteKey = std::tuple<std::string, uint32_t>;
  using PredicateKey = std::tuple<std::string, uint32_t, uint32_t>;
  std::vector<std::set<SiteKey>> expected_sites;
  std::vector<std::set<PredicateKey>> expected_predicates;
  std::vector<std::string> files;
  std::mt19937_64 random(11);
  for (int r = 0; r < 150; ++r) {
    std::string text = "<report id=\"samples\">\n";
    std::set<SiteKey> sites;
    std::set<PredicateKey> predicates;
    std::vector<size_t> order = {0, 1, 2};
    if (r % 7 == 3) order = {2, 0, 1};  // out of the usual order
    if (r % 11 == 5) order.push_back(1);  // a section twice: its bits are the union
    for (size_t u : order) {
      const Unit& unit = units[u];
      text += "<samples unit=\"" + unit.name + "\" scheme=\"" + unit.scheme + "\">\n";
      // Now and then a malformed line (not in the first report: it would set the unknown scheme's counters).
      const bool malformed = r > 0 && random() % 8 == 0;
      const uint32_t bad_line = static_cast<uint32_t>(random() % kSites);
      std::set<SiteKey> section_sites;
      std::set<PredicateKey> section_predicates;
      for (uint32_t i = 0; i < kSites; ++i) {
        std::string line;
        uint32_t nonzero = 0;
        for (uint32_t c = 0; c < unit.counters; ++c) {
          std::string counter = counter_text(random);
          if (nonzero_text(counter)) nonzero |= 1u << c;
          line += (c == 0 ? "" : "\t") + counter;
        }
        if (malformed && i == bad_line) {
          switch (random() % 4) {
            case 0: line += "\t"; break;             // an empty counter at the end
            case 1: line = "\t" + line; break;       // and at the start
            case 2: line.insert(line.size() / 2, "x"); break;
            default: line.insert(line.find('\t'), "\t"); break;  // two tabs
          }
        }
        text += line + (random() % 10 == 0 ? "\r\n" : "\n");
        if (nonzero != 0) section_sites.emplace(unit.name, i);
        uint32_t truth = true_predicates(unit.kind, nonzero);
        for (uint32_t p = 0; p < predicate_count(unit.kind, unit.counters); ++p) {
          if (truth >> p & 1) section_predicates.emplace(unit.name, i, p);
        }
      }
      text += "</samples>\n";
      if (!malformed) {  // a malformed line leaves its section out
        sites.insert(section_sites.begin(), section_sites.end());
        predicates.insert(section_predicates.begin(), section_predicates.end());
      }
    }
    text += "</report>\n";
    char name[32];
    std::snprintf(name, sizeof name, "run-%03d.txt", r);
    std::string path = (dir / "reports" / name).string();
    FILE* out = std::fopen(path.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fwrite(text.data(), 1, text.size(), out);
    std::fclose(out);
    files.push_back(path);
    expected_sites.push_back(sites);
    expected_predicates.push_back(predicates);
  }
  for (unsigned jobs : {1u, 3u}) {
    SitesIndex index;
    DiagnosticList sink;
    ASSERT_TRUE(index.add_path((dir / "app.sites").string(), sink));
    ReadOptions options;
    options.jobs = jobs;
    ReadResult result = read_runs(files, index, options, sink);
    ASSERT_EQ(result.runs.size(), files.size());
    const Catalogue& catalogue = result.catalogue;
    for (size_t r = 0; r < files.size(); ++r) {
      std::set<SiteKey> sites;
      std::set<PredicateKey> predicates;
      for (uint32_t id : result.runs.sites(r)) {
        sites.emplace(catalogue.sites[id].unit, static_cast<uint32_t>(std::stoul(catalogue.sites[id].line)));
      }
      for (uint32_t id : result.runs.predicates(r)) {
        const Site& site = catalogue.sites[catalogue.predicate_site[id]];
        predicates.emplace(site.unit, static_cast<uint32_t>(std::stoul(site.line)), id - site.first_predicate);
      }
      EXPECT_EQ(sites, expected_sites[r]) << files[r] << " -j" << jobs;
      EXPECT_EQ(predicates, expected_predicates[r]) << files[r] << " -j" << jobs;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sampler::analysis
