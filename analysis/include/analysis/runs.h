// Reading runs: thousands of reports streamed, in parallel, into what the statistics need of each run (its
// outcome, the sites it observed, the predicates it observed true, its crash stack's group). Memory grows with
// the number of runs and of what they observed, never with report text: each report is read in one pass by the
// formats library's reader (sections/report.h; plain or gzip), from a buffer each thread reuses for reports under
// 1 MiB, streamed otherwise, and only these lists are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/id_list.h"
#include "analysis/predicates.h"
#include "sections/diagnostics.h"
#include "sections/progress.h"
#include "sections/resolve.h"

namespace sampler::analysis {

/// Every site any run referred to, with its predicates; ids are dense, in the order sections were first met.
struct Catalogue {
  std::vector<Site> sites;
  std::vector<uint32_t> predicate_site;  ///< predicate id -> site id
  size_t predicate_count() const { return predicate_site.size(); }
};

/// The runs, in the order of their report files. Per run: its observed sites and true predicates as compact
/// sorted lists (analysis/id_list.h), kept end to end in two byte arrays.
struct RunSet {
  std::vector<std::string> names;      ///< the report's path
  std::vector<uint8_t> failed;         ///< 1: failing run
  std::vector<uint8_t> crashed;        ///< 1: the report has a main-backtrace subreport
  std::vector<int32_t> crash_group;    ///< index into crash_groups, -1 if none
  std::vector<std::string> crash_groups;  ///< each group's signature (crash_signature())
  std::vector<uint64_t> site_offsets{0};       ///< runs + 1 offsets into site_data
  std::vector<uint8_t> site_data;
  std::vector<uint64_t> predicate_offsets{0};  ///< runs + 1 offsets into predicate_data
  std::vector<uint8_t> predicate_data;

  size_t size() const { return names.size(); }
  /// Calls f(id) for each site the run observed / each predicate it found true, in increasing order.
  template <class F>
  void for_each_site(size_t run, F&& f) const {
    id_list::for_each(site_data.data() + site_offsets[run], f);
  }
  template <class F>
  void for_each_predicate(size_t run, F&& f) const {
    id_list::for_each(predicate_data.data() + predicate_offsets[run], f);
  }
  bool has_predicate(size_t run, uint32_t id) const {
    return id_list::contains(predicate_data.data() + predicate_offsets[run], id);
  }
  /// The lists decoded (tests, the index writer).
  std::vector<uint32_t> sites(size_t run) const;
  std::vector<uint32_t> predicates(size_t run) const;
  /// Appends a run; `sites` and `predicates` must be sorted and free of duplicates.
  void add(std::string name, bool failing, bool crash, int32_t group, std::span<const uint32_t> sites,
           std::span<const uint32_t> predicates);
  /// Appends run `run` of `other` (lists copied as they are encoded).
  void add_from(const RunSet& other, size_t run, int32_t group);
};

/// How read_runs() works.
struct ReadOptions {
  unsigned jobs = 0;        ///< reading threads; 0: one per core
  size_t crash_frames = 3;  ///< top frames that make a crash group's signature
  /// Makes a crash's signature from its main-backtrace body and crash_frames instead of crash_signature():
  /// the symbolized signature (analysis/crash_symbols.h). Called from the reading threads at once.
  std::function<std::string(std::string_view body, size_t frames)> crash_signer;
  Progress* progress = nullptr;  ///< told how many reports there are, and of each one read (with its bytes)
  /// When set, report i's text is text_of(i) instead of the file files[i] (which then only names the run, in
  /// diagnostics and RunSet::names): runs already in memory, such as those a collector's console reads from its
  /// store. Called from the reading threads at once; the text is read before the same thread calls it again (so
  /// it may live in a buffer of that thread's).
  std::function<std::string_view(size_t index)> text_of;
  /// When set, input i is no report but a run's summary (analysis/run_summary.h): summary_of(i) gives its bytes
  /// (called as text_of is). Its sections are matched with `sites` and checked, and its crash signed, as the
  /// report's would be: the same runs, catalogue and diagnostics, without parsing a report.
  std::function<std::string_view(size_t index)> summary_of;
};

/// What read_runs() found.
struct ReadResult {
  RunSet runs;
  Catalogue catalogue;
  uint64_t left_out = 0;    ///< reports that could not be read (or held no samples): named on the sink
  uint64_t bytes = 0;       ///< report bytes read (compressed size for gzip files)
  bool ok = true;           ///< no error was reported
};

/// The report files of the operands: files as given, directories searched recursively for regular files (in
/// sorted path order). An operand that does not exist is an error on the sink (ok becomes false).
std::vector<std::string> list_reports(const std::vector<std::string>& operands, DiagnosticSink& sink, bool& ok);

/// Reads `files` with `options.jobs` threads. Outcome: failing if the report has a main-backtrace subreport.
/// Samples sections are matched with `sites` by (unit, scheme) as resolveSamples does; bounds are skipped. Each
/// problem goes to `sink` (from several threads, one call at a time). A report that cannot be opened or read to
/// its end, or that holds no samples subreport, is left out and counted.
ReadResult read_runs(const std::vector<std::string>& files, const SitesIndex& sites, const ReadOptions& options,
                     DiagnosticSink& sink);

/// read_runs() in steps: each read() appends its runs to those read before, as one read_runs() over all the
/// files in turn would have them (runs in order, crash groups numbered by their first run, each section
/// entered in the catalogue once, each missing section key named once), and truncate() goes back to what a
/// mark() held. What the console keeps of an application between pages (collector/src/console.cpp).
class RunReader {
 public:
  /// `sites` must outlive the reader.
  explicit RunReader(const SitesIndex& sites);
  ~RunReader();
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  /// Reads `files` as read_runs() does (options.text_of and summary_of are given indexes into `files`).
  void read(const std::vector<std::string>& files, const ReadOptions& options, DiagnosticSink& sink);
  /// Everything read so far.
  ReadResult& result() { return result_; }
  const ReadResult& result() const { return result_; }

  /// What has been read, to go back to.
  struct Mark {
    size_t runs = 0, crash_groups = 0, sites = 0, predicates = 0;
    std::pair<size_t, size_t> registry;
    uint64_t left_out = 0, bytes = 0;
    bool ok = true;
  };
  Mark mark() const;
  /// Forgets what was read after `mark` (taken from this reader, with nothing truncated since).
  void truncate(const Mark& mark);
  /// The bytes the runs and the catalogue hold (an estimate: containers' capacities).
  size_t memory() const;

 private:
  struct State;
  const SitesIndex& sites_;
  ReadResult result_;
  std::unique_ptr<State> state_;
};

}  // namespace sampler::analysis
