// sampler-analyze's engine: reports and site information in, the ranked table (TSV or JSON) and the HTML page
// out. The tool's main (tools/sampler-analyze/) parses the command line into AnalyzeOptions and calls analyze().
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/ranking.h"
#include "sections/diagnostics.h"
#include "store/store.h"

namespace sampler::analysis {

enum class Format { kTsv, kJson };

/// kAnalyze: reports in, table out. kIndex: reports in, an index file out (analysis/index.h). kRank: indexes in,
/// table out.
enum class Mode { kAnalyze, kIndex, kRank };

struct AnalyzeOptions {
  Mode mode = Mode::kAnalyze;
  std::string index_output;          ///< kIndex: the index file to write
  std::vector<std::string> sites;    ///< site information: ELF files, .sites files, directories
  std::string section;               ///< the ELF section holding it (empty: .debug_site_info)
  std::vector<std::string> reports;  ///< report files and directories (kRank: index files)
  std::string labels;                ///< labels file (empty: none)
  std::string html_dir;              ///< write DIR/index.html (empty: no page)
  std::string source_dir;            ///< where the page finds the sites' source files (empty: not shown)
  Format format = Format::kTsv;
  RankOptions rank;
  unsigned jobs = 0;                 ///< reading threads (0: one per core)
  size_t top = SIZE_MAX;             ///< rows of the table
  size_t crash_frames = 3;
  /// Symbols for crash groups by function and line (analysis/crash_symbols.h): a directory of BUILDID.gsym and
  /// symbfiles (--symbols), or the symbols a collector stored (--database). Neither: addresses.
  std::string symbols_dir;
  store::Store* symbol_store = nullptr;
  std::string symbol_app;  ///< with symbol_store: the application whose symbols to use (symbols are per application)
  Progress* progress = nullptr;  ///< told of the reports read (analysis/runs.h); finished once they are
};

/// Reads, ranks, writes the table with `write` and the page into options.html_dir (kIndex: reads and writes the
/// index only). Every problem goes to `sink`; returns true if none was an error (a report left out is an error:
/// exit status 1, the analysis still runs).
bool analyze(const AnalyzeOptions& options, const std::function<void(std::string_view)>& write,
             DiagnosticSink& sink);

}  // namespace sampler::analysis
