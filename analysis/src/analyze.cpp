// sampler-analyze's engine (analysis/analyze.h).
#include "analysis/analyze.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "analysis/crash_symbols.h"
#include "analysis/index.h"
#include "analysis/labels.h"
#include "analysis/output.h"
#include "analysis/runs.h"
#include "sections/resolve.h"

namespace sampler::analysis {

bool analyze(const AnalyzeOptions& options, const std::function<void(std::string_view)>& write,
             DiagnosticSink& sink) {
  bool ok = true;
  Catalogue catalogue;
  RunSet runs;
  uint64_t left_out = 0;
  if (options.mode == Mode::kRank) {
    ok = read_indexes(options.reports, catalogue, runs, sink);
  } else {
    SitesIndex index(options.section.empty() ? std::string(kDefaultSitesSection) : options.section);
    for (const std::string& path : options.sites) ok = index.add_path(path, sink) && ok;
    std::vector<std::string> files = list_reports(options.reports, sink, ok);
    ReadOptions read;
    read.jobs = options.jobs;
    read.crash_frames = options.crash_frames;
    read.progress = options.progress;
    // Symbol sources are called from the reading threads: their problems are collected under a lock of their
    // own and passed on after reading.
    SerializedList symbol_problems;
    std::unique_ptr<SymbolSource> symbols;
    if (!options.symbols_dir.empty()) symbols = std::make_unique<GsymDirectory>(options.symbols_dir, symbol_problems);
    if (options.symbol_store != nullptr)
      symbols = std::make_unique<StoreSymbols>(*options.symbol_store, options.symbol_app, symbol_problems);
    if (symbols) {
      read.crash_signer = [source = symbols.get()](std::string_view body, size_t frames) {
        return symbolized_crash_signature(body, frames, *source);
      };
    }
    ReadResult result = read_runs(files, index, read, sink);
    if (options.progress != nullptr) options.progress->finish();
    for (const Diagnostic& problem : symbol_problems.items) sink.report(problem);
    ok = symbol_problems.items.empty() && ok;
    ok = result.ok && ok;
    catalogue = std::move(result.catalogue);
    runs = std::move(result.runs);
    left_out = result.left_out;
  }
  if (!options.labels.empty()) ok = apply_labels(options.labels, runs, sink) && ok;
  if (options.mode == Mode::kIndex) return write_index(options.index_output, catalogue, runs, sink) && ok;

  Ranking ranking = rank(runs, catalogue.predicate_site, catalogue.sites.size(), options.rank);
  Analysis analysis{&catalogue, &runs, &ranking, options.rank, left_out};
  write(options.format == Format::kJson ? format_json(analysis, options.top) : format_tsv(analysis, options.top));

  if (!options.html_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.html_dir, error);
    std::string path = options.html_dir + "/index.html";
    std::ofstream page(path, std::ios::binary | std::ios::trunc);
    page << format_html(analysis, options.top, options.source_dir);
    page.close();
    if (error || !page) {
      sink.error(path, 0, "cannot write the page: " + (error ? error.message() : std::string(std::strerror(errno))));
      ok = false;
    }
  }
  return ok;
}

}  // namespace sampler::analysis
