// Reading runs (analysis/runs.h) against a reference written the plain way: random samples lines (short and long
// counters, zeros written "0" or "000", CRLF line ends, malformed lines, sections out of order or twice) must give
// each run exactly the observed sites and true predicates that splitting the lines by hand gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/predicates.h"
#include "analysis/run_summary.h"
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
  // Reports that read_runs() names in diagnostics: a section a line short, a unit without site information, and a
  // crash (a main-backtrace) with no samples section; each still a run, with nothing observed.
  const std::vector<std::string> odd = {
      "<report id=\"samples\">\n<samples unit=\"" + units[0].name + "\" scheme=\"branches\">\n" +
          [] { std::string lines; for (uint32_t i = 1; i < kSites; ++i) lines += "1\t0\n"; return lines; }() +
          "</samples>\n</report>\n",
      "<report id=\"samples\">\n<samples unit=\"000000000000000000000000000000ff\" scheme=\"branches\">\n1\t0\n"
      "</samples>\n</report>\n",
      "<report id=\"samples\">\n</report>\n<report id=\"main-backtrace\">\nsignal:11:SIGSEGV:0x0\n"
      "#0 0x1234 in f (/bin/x+0x1234)\n</report>\n",
  };
  for (size_t o = 0; o < odd.size(); ++o) {
    std::string path = (dir / "reports" / ("odd-" + std::to_string(o) + ".txt")).string();
    FILE* out = std::fopen(path.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fwrite(odd[o].data(), 1, odd[o].size(), out);
    std::fclose(out);
    files.push_back(path);
    expected_sites.emplace_back();
    expected_predicates.emplace_back();
  }
  // The same runs read from their summaries (analysis/run_summary.h), as the console reads stored runs: the same
  // lists, crash groups and diagnostics.
  std::vector<std::string> summaries;
  for (const std::string& file : files) {
    std::string text;
    FILE* in = std::fopen(file.c_str(), "r");
    ASSERT_NE(in, nullptr);
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, in)) > 0;) text.append(buffer, n);
    std::fclose(in);
    summaries.push_back(summarize_report(text));
  }
  std::vector<std::string> diagnostics[2];
  std::vector<std::string> crash_groups[2];
  for (auto [jobs, from_summaries] : {std::pair{1u, false}, std::pair{3u, false}, std::pair{1u, true},
                                      std::pair{3u, true}}) {
    SitesIndex index;
    DiagnosticList sink;
    ASSERT_TRUE(index.add_path((dir / "app.sites").string(), sink));
    ReadOptions options;
    options.jobs = jobs;
    if (from_summaries) options.summary_of = [&summaries](size_t i) { return std::string_view(summaries[i]); };
    ReadResult result = read_runs(files, index, options, sink);
    ASSERT_EQ(result.runs.size(), files.size());
    EXPECT_EQ(result.left_out, 0u);
    if (jobs == 1) {
      for (const Diagnostic& d : sink.items) {
        diagnostics[from_summaries].push_back(d.file + ":" + std::to_string(d.line) + ": " + d.message);
      }
      crash_groups[from_summaries] = result.runs.crash_groups;
    }
    EXPECT_EQ(result.runs.crashed.back(), 1) << "from summaries: " << from_summaries;
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
      EXPECT_EQ(sites, expected_sites[r]) << files[r] << " -j" << jobs << " from summaries: " << from_summaries;
      EXPECT_EQ(predicates, expected_predicates[r])
          << files[r] << " -j" << jobs << " from summaries: " << from_summaries;
    }
  }
  // Every kind of diagnostic came, and the same from the summaries (the report's line numbers included).
  std::sort(diagnostics[0].begin(), diagnostics[0].end());
  std::sort(diagnostics[1].begin(), diagnostics[1].end());
  EXPECT_EQ(diagnostics[1], diagnostics[0]);
  auto said = [&diagnostics](std::string_view what) {
    return std::any_of(diagnostics[0].begin(), diagnostics[0].end(),
                       [what](const std::string& d) { return d.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(said("malformed samples line")) << ::testing::PrintToString(diagnostics[0]);
  EXPECT_TRUE(said("39 samples lines, but 40 sites"));
  EXPECT_TRUE(said("no site information for unit 000000000000000000000000000000ff"));
  ASSERT_EQ(crash_groups[0].size(), 1u);
  EXPECT_EQ(crash_groups[1], crash_groups[0]);
  fs::remove_all(dir);
}

// A stored summary may be corrupt (a disk, a hand-edited database): every truncation and every flipped byte of one
// reads as a run left out and named, or as some run, never past the bytes' end (the reader checks every length).
TEST(ReadRuns, CorruptSummariesAreLeftOutOrRead) {
  const std::string report =
      "<report id=\"samples\">\n<samples unit=\"000000000000000000000000000000a1\" scheme=\"branches\">\n"
      "1\t0\n0\t3\n0\t0\n</samples>\n</report>\n<report id=\"main-backtrace\">\nsignal:11:SIGSEGV:0x0\n</report>\n";
  const std::string summary = summarize_report(report);
  std::vector<std::string> corrupt;
  for (size_t n = 0; n < summary.size(); ++n) corrupt.push_back(summary.substr(0, n));
  for (size_t i = 0; i < summary.size(); ++i) {
    for (unsigned char flip : {0x01, 0x80, 0xff}) {
      std::string bytes = summary;
      bytes[i] = static_cast<char>(static_cast<unsigned char>(bytes[i]) ^ flip);
      corrupt.push_back(bytes);
    }
  }
  corrupt.push_back(summary + "x");
  SitesIndex index;
  DiagnosticList sink;
  const std::string sites =
      "<sites unit=\"000000000000000000000000000000a1\" scheme=\"branches\">\nf.c\t1\tf\t1\tx\nf.c\t2\tf\t2\ty\n"
      "f.c\t3\tf\t3\tz\n</sites>\n";
  ASSERT_TRUE(index.add_text("app.sites", sites, sink));
  ReadOptions options;
  options.jobs = 1;
  options.summary_of = [&corrupt](size_t i) { return std::string_view(corrupt[i]); };
  std::vector<std::string> names(corrupt.size(), "run");
  ReadResult result = read_runs(names, index, options, sink);
  EXPECT_EQ(result.runs.size() + result.left_out, corrupt.size());
  EXPECT_GE(result.left_out, summary.size());  // every truncation at least
  for (size_t r = 0; r < result.runs.size(); ++r) {
    for (uint32_t id : result.runs.sites(r)) EXPECT_LT(id, result.catalogue.sites.size());
    for (uint32_t id : result.runs.predicates(r)) EXPECT_LT(id, result.catalogue.predicate_count());
  }
}

// RunReader: runs read in steps, some read again after truncate(), end as one read_runs() over them all: the same
// runs and lists, crash groups numbered by their first run, the catalogue with each section once (in the order
// met, as one thread reads), each missing section named once.
TEST(ReadRuns, InStepsAndTruncatedAsAtOnce) {
  auto report = [](const std::string& unit, const std::string& lines, const std::string& crash) {
    return "<report id=\"samples\">\n<samples unit=\"" + unit + "\" scheme=\"branches\">\n" + lines +
           "</samples>\n</report>\n" +
           (crash.empty() ? "" : "<report id=\"main-backtrace\">\nsignal:11:SIGSEGV:0x0\n" + crash + "\n</report>\n");
  };
  const std::string a = "000000000000000000000000000000a1", b = "000000000000000000000000000000b2",
                    missing = "000000000000000000000000000000c3";
  std::vector<std::string> summaries = {
      summarize_report(report(a, "1\t0\n0\t3\n", "")),
      summarize_report(report(a, "0\t1\n1\t1\n", "p(f+0x1)[0x1]")),
      summarize_report(report(b, "2\t0\n", "")),
      summarize_report(report(missing, "1\t1\n", "p(g+0x1)[0x2]")),
      summarize_report(report(b, "0\t4\n", "p(f+0x1)[0x1]")),
      summarize_report(report(a, "5\t5\n5\t0\n", "p(h+0x1)[0x3]")),
  };
  SitesIndex index;
  DiagnosticList sink;
  ASSERT_TRUE(index.add_text("a.sites", "<sites unit=\"" + a + "\" scheme=\"branches\">\nf.c\t1\tf\t1\tx\n"
                                        "f.c\t2\tf\t2\ty\n</sites>\n", sink));
  ASSERT_TRUE(index.add_text("b.sites", "<sites unit=\"" + b + "\" scheme=\"branches\">\ng.c\t1\tg\t1\tz\n</sites>\n",
                             sink));
  auto read_range = [&](RunReader& reader, size_t from, size_t to, DiagnosticList& problems) {
    ReadOptions options;
    options.jobs = 1;  // the catalogue in the order one thread meets the sections
    options.summary_of = [&summaries, from](size_t i) { return std::string_view(summaries[from + i]); };
    std::vector<std::string> names;
    for (size_t i = from; i < to; ++i) names.push_back("run" + std::to_string(i));
    reader.read(names, options, problems);
  };
  DiagnosticList at_once_problems;
  RunReader at_once(index);
  read_range(at_once, 0, summaries.size(), at_once_problems);

  DiagnosticList step_problems;
  RunReader steps(index);
  read_range(steps, 0, 1, step_problems);
  const RunReader::Mark mark = steps.mark();
  read_range(steps, 1, 5, step_problems);  // a page's own runs, then forgotten
  steps.truncate(mark);
  EXPECT_EQ(steps.result().runs.size(), 1u);
  EXPECT_EQ(steps.result().runs.crash_groups.size(), 0u);
  read_range(steps, 1, 3, step_problems);
  read_range(steps, 3, summaries.size(), step_problems);

  const ReadResult& expected = at_once.result();
  const ReadResult& got = steps.result();
  ASSERT_EQ(got.runs.size(), expected.runs.size());
  EXPECT_EQ(got.runs.names, expected.runs.names);
  EXPECT_EQ(got.runs.crash_group, expected.runs.crash_group);
  EXPECT_EQ(got.runs.crash_groups, expected.runs.crash_groups);
  EXPECT_EQ(expected.runs.crash_groups.size(), 3u);  // f's stack (twice), g's, h's
  EXPECT_EQ(got.runs.failed, expected.runs.failed);
  EXPECT_EQ(got.left_out, expected.left_out);
  ASSERT_EQ(got.catalogue.sites.size(), 3u);
  ASSERT_EQ(got.catalogue.sites.size(), expected.catalogue.sites.size());
  EXPECT_EQ(got.catalogue.predicate_site, expected.catalogue.predicate_site);
  for (size_t i = 0; i < got.catalogue.sites.size(); ++i) {
    EXPECT_EQ(got.catalogue.sites[i].unit, expected.catalogue.sites[i].unit);
    EXPECT_EQ(got.catalogue.sites[i].line, expected.catalogue.sites[i].line);
  }
  for (size_t r = 0; r < got.runs.size(); ++r) {
    EXPECT_EQ(got.runs.sites(r), expected.runs.sites(r)) << r;
    EXPECT_EQ(got.runs.predicates(r), expected.runs.predicates(r)) << r;
  }
  // The missing section named once in each reading, though the steps read its run twice (truncated once).
  auto named = [&missing](const DiagnosticList& problems) {
    size_t n = 0;
    for (const Diagnostic& problem : problems.items) n += problem.message.find(missing) != std::string::npos;
    return n;
  };
  EXPECT_EQ(named(at_once_problems), 1u);
  EXPECT_EQ(named(step_problems), 2u);  // once in the forgotten step, once after
}

}  // namespace
}  // namespace sampler::analysis
