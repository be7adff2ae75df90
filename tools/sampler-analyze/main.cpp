// sampler-analyze: ranks the predicates of many feedback reports by how well they predict failure (docs/analysis.md;
// Liblit et al., "Scalable Statistical Bug Isolation", PLDI 2005).
//
//   sampler-analyze --sites app libplugin.so --html out/ reports/
//
// The work is in analysis/ (analysis/analyze.h); this main turns the command line into AnalyzeOptions.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <filesystem>
#include <memory>

#include "analysis/analyze.h"
#include "analysis/command_line.h"
#include "store/files.h"
#include "tool.h"

namespace {

namespace tool = sampler::tool;
namespace analysis = sampler::analysis;

constexpr tool::Option kOptions[] = {
    {"sites", 's', "FILE...", "site information: ELF files, .sites files, directories of *.sites (required)"},
    {"section", 0, "NAME", "the ELF section holding site information (default .debug_site_info)"},
    {"labels", 'l', "TSV", "outcomes: lines 'REPORT<TAB>success' or 'REPORT<TAB>failure' override the crash rule"},
    {"html", 0, "DIR", "also write the HTML page DIR/index.html"},
    {"source-dir", 0, "DIR", "the page shows each predictor's source line, from the file under DIR"},
    {"format", 'f', "tsv|json", "the table on standard output (default tsv)"},
    {"metric", 'm', "NAME", "rank by importance (default), increase, ochiai, tarantula or dstar"},
    {"top", 'n', "N", "at most N rows in the table and the page"},
    {"all-predicates", 0, nullptr, "also list every other predicate whose site was observed, scored over all runs"},
    {"jobs", 'j', "N", "read reports on N threads (default: one per core)"},
    {"crash-frames", 0, "N", "top frames that group crash stacks (default 3)"},
    {"output", 'o', "FILE", "index: the index file to write"},
    {"database", 0, "URL", "analyse the runs a collector stored (sqlite:PATH or postgresql://...) instead of files"},
    {"app", 0, "NAME", "with --database: the application whose runs to analyse"},
    {"version", 0, "V", "with --database: only the runs of this version of the application"},
    {"failure-statuses", 0, "LIST", "with --database: exit statuses that count as failures (default 1-255)"},
    {"include-unfinished", 0, nullptr, "with --database: also the runs whose outcome is unknown (interim reports)"},
    {"symbols", 0, "DIR", "group crashes by function and line from DIR/BUILDID.gsym and symbfiles (sampler-symbols)"},
};

constexpr tool::Usage kUsage = {
    "sampler-analyze",
    "--sites FILE... [--labels TSV] [--html DIR] [--format tsv|json] REPORT-OR-DIR...\n"
    "       sampler-analyze --database URL --app NAME [--version V] --sites FILE... [OPTIONS]\n"
    "       sampler-analyze index --sites FILE... --output INDEX REPORT-OR-DIR...\n"
    "       sampler-analyze rank [--labels TSV] [--html DIR] [--format tsv|json] INDEX...",
    "Rank the sampled predicates of many reports by how much they predict failure, with iterative elimination.",
    kOptions,
    "REPORT-OR-DIR: report files (plain or gzip) and directories searched recursively. A run fails if its report\n"
    "has a main-backtrace subreport (a crash), unless --labels says otherwise. --sites takes every argument up to\n"
    "the next option or '--'; when nothing but operands follows it, it takes its first argument and then those\n"
    "that are *.sites, ELF or ar files (give a directory of *.sites before another option, or by --sites DIR).\n"
    "\n"
    "Output: a header line, then one predictor per line, best first: rank, elimination round ('-' for predicates\n"
    "that no round chose), the metric's score, increase, its 95% lower bound, failure, context, importance,\n"
    "F, S, F_obs, S_obs, file, line, function, scheme, the predicate in words. Predicates whose Increase is not\n"
    "above 0 at 95% confidence are left out, unless --all-predicates: the rows then go on, best first, with every\n"
    "predicate whose site some run observed and whose counts over all runs the rows above do not give (those\n"
    "that did not pass the test, and the predictors of round 2 on, above with their rounds' runs), round '-'.\n"
    "A report that cannot be read is named on stderr and left out; the analysis still runs and the exit status\n"
    "is 1.\n"
    "\n"
    "Beyond one machine: 'index' reads a shard of reports into a compact index file (per run: outcome, observed\n"
    "sites, true predicates, crash group); 'rank' merges any number of indexes and ranks them as one set of runs.\n"
    "See sampler-analyze(1) and docs/analysis.md.\n",
};

bool parse_count(const std::string& text, size_t& value) {
  char* end = nullptr;
  errno = 0;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || parsed == 0) return false;
  value = static_cast<size_t>(parsed);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> rest;
  analysis::AnalyzeOptions options;
  // The subcommand, if any, is the first argument.
  if (argc > 1 && (std::strcmp(argv[1], "index") == 0 || std::strcmp(argv[1], "rank") == 0)) {
    options.mode = argv[1][0] == 'i' ? analysis::Mode::kIndex : analysis::Mode::kRank;
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  std::string joined;  // "--version V": the application's version (--database); a lone --version is the tool's
  std::vector<char*> arguments = tool::join_option_value(argc, argv, "version", joined);
  argc = static_cast<int>(arguments.size()) - 1;
  argv = arguments.data();
  rest.push_back(argv[0]);
  options.sites = analysis::take_sites_arguments(std::vector<std::string>(argv + 1, argv + argc), rest,
                                                 analysis::is_site_information_file);
  std::vector<char*> args;
  for (std::string& arg : rest) args.push_back(arg.data());
  args.push_back(nullptr);
  tool::CommandLine command = tool::parse_command_line(kUsage, static_cast<int>(rest.size()), args.data());
  if (command.exit_status) return *command.exit_status;

  bool ranking = options.mode == analysis::Mode::kRank;
  if (options.sites.empty() && !ranking) return tool::usage_error(kUsage, "--sites FILE... is required");
  if (!options.sites.empty() && ranking) return tool::usage_error(kUsage, "rank takes no --sites: indexes hold them");
  // --database: the stored runs are written out with labels from their outcomes (store/files.h)
  // into a temporary directory, which is then analysed like any directory of reports.
  std::string staged;
  std::unique_ptr<sampler::store::Store> store;  // --database: also the symbols the collector stored
  if (auto url = command.value("database")) {
    if (!command.has("app")) return tool::usage_error(kUsage, "--database needs --app NAME");
    if (!command.operands.empty()) return tool::usage_error(kUsage, "--database takes no REPORT-OR-DIR");
    sampler::store::FailureRule rule;
    std::string rule_error;
    if (auto statuses = command.value("failure-statuses");
        statuses && !sampler::store::parse_failure_statuses(*statuses, rule, rule_error)) {
      return tool::usage_error(kUsage, rule_error);
    }
    std::string error, dir = (std::filesystem::temp_directory_path() / "sampler-analyze.XXXXXX").string();
    store = sampler::store::open_store(*url, error);
    if (store && mkdtemp(dir.data()) == nullptr) error = "cannot create a temporary directory";
    sampler::Progress progress("sampler-analyze: reading stored runs");  // on a terminal only
    const bool staged_ok =
        store && error.empty() &&
        sampler::store::write_runs(*store, {*command.value("app"), command.value("version")}, dir + "/runs",
                                   command.has("labels") ? "" : dir + "/labels", error, rule,
                                   [&progress](uint64_t bytes) { progress.add(1, bytes); },
                                   command.has("include-unfinished")) >= 0;
    progress.finish();
    if (!staged_ok) {
      std::fprintf(stderr, "sampler-analyze: error: %s\n", error.c_str());
      if (store && !error.starts_with("cannot create a temp")) std::filesystem::remove_all(dir);
      return tool::kExitDataError;
    }
    staged = dir;
    command.operands = {dir + "/runs"};
  }
  if ((command.has("failure-statuses") || command.has("include-unfinished")) && staged.empty()) {
    // Report files carry no stored outcome column: their outcome is the crash rule or --labels.
    return tool::usage_error(kUsage, std::string(command.has("failure-statuses") ? "--failure-statuses"
                                                                                 : "--include-unfinished") +
                                         " goes with --database");
  }
  if (command.operands.empty()) return tool::usage_error(kUsage, ranking ? "no INDEX given" : "no REPORT-OR-DIR given");
  options.index_output = command.value("output").value_or("");
  if ((options.mode == analysis::Mode::kIndex) != !options.index_output.empty()) {
    return tool::usage_error(kUsage, "--output INDEX goes with 'index', and only with it");
  }
  options.reports = command.operands;
  options.section = command.value("section").value_or("");
  options.labels = command.value("labels").value_or(staged.empty() ? "" : staged + "/labels");
  options.html_dir = command.value("html").value_or("");
  options.source_dir = command.value("source-dir").value_or("");
  options.symbols_dir = command.value("symbols").value_or("");
  // Crashes are symbolized with the symbols pushed to the collector (sampler-symbols push), unless --symbols.
  if (store && options.symbols_dir.empty()) {
    options.symbol_store = store.get();
    options.symbol_app = *command.value("app");
  }
  if (auto format = command.value("format")) {
    if (*format == "json") {
      options.format = analysis::Format::kJson;
    } else if (*format != "tsv") {
      return tool::usage_error(kUsage, "--format must be tsv or json, not '" + *format + "'");
    }
  }
  if (auto metric = command.value("metric"); metric && !analysis::parse_metric(*metric, options.rank.metric)) {
    return tool::usage_error(kUsage, "unknown --metric '" + *metric + "'");
  }
  options.rank.all_predicates = command.has("all-predicates");
  if (options.rank.all_predicates && options.mode == analysis::Mode::kIndex) {
    return tool::usage_error(kUsage, "--all-predicates goes with a table, not with 'index'");
  }
  size_t count = 0;
  if (auto top = command.value("top")) {
    if (!parse_count(*top, count)) return tool::usage_error(kUsage, "--top needs a positive number");
    options.top = count;
  }
  if (auto jobs = command.value("jobs")) {
    if (!parse_count(*jobs, count) || count > 1024) return tool::usage_error(kUsage, "--jobs needs 1 to 1024");
    options.jobs = static_cast<unsigned>(count);
  }
  if (auto frames = command.value("crash-frames")) {
    if (!parse_count(*frames, count)) return tool::usage_error(kUsage, "--crash-frames needs a positive number");
    options.crash_frames = count;
  }

  tool::Output output;
  tool::StderrSink sink(kUsage.program, &output);
  sampler::Progress progress("sampler-analyze: reading reports");  // on a terminal only
  if (options.mode != analysis::Mode::kRank) {
    options.progress = &progress;
    sink.set_progress(&progress);
  }
  bool ok = analysis::analyze(options, [&](std::string_view text) { output.write(text); }, sink);
  ok = tool::finish_output(output, sink) && ok;
  if (!staged.empty()) std::filesystem::remove_all(staged);
  return ok ? tool::kExitSuccess : tool::kExitDataError;
}
