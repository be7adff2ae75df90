// sampler-analyze: ranks the predicates of many feedback reports by how well they predict failure (docs/analysis.md;
// Liblit et al., "Scalable Statistical Bug Isolation", PLDI 2005).
//
//   sampler-analyze --sites app libplugin.so --html out/ reports/
//
// The work is in analysis/ (analysis/analyze.h); this main turns the command line into AnalyzeOptions.
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <filesystem>
#include <memory>

#include "analysis/analyze.h"
#include "analysis/command_line.h"
#include "analysis/plan.h"
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
    "       sampler-analyze rank [--labels TSV] [--html DIR] [--format tsv|json] INDEX...\n"
    "       sampler-analyze plan --budget PERCENT [OPTIONS] -o PLAN REPORT-OR-DIR...",
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
    "'plan' writes a sampling plan from the runs (sampler-analyze plan --help).\n"
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


// --database: the stored runs are written out (store/files.h) into a temporary directory `staged`, as DIR/runs and,
// with `labels`, their labels from their outcomes as DIR/labels; the directory is then read like any directory of
// reports. Returns 0, or the exit status after an error (reported).
int stage_database(const tool::CommandLine& command,
                   const sampler::store::FailureRule& rule, bool labels,
                   std::unique_ptr<sampler::store::Store>& store, std::string& staged) {
  std::string error, dir = (std::filesystem::temp_directory_path() / "sampler-analyze.XXXXXX").string();
  store = sampler::store::open_store(*command.value("database"), error);
  if (store && mkdtemp(dir.data()) == nullptr) error = "cannot create a temporary directory";
  sampler::Progress progress("sampler-analyze: reading stored runs");  // on a terminal only
  const bool staged_ok =
      store && error.empty() &&
      sampler::store::write_runs(*store, {*command.value("app"), command.value("version")}, dir + "/runs",
                                 labels ? dir + "/labels" : "", error, rule,
                                 [&progress](uint64_t bytes) { progress.add(1, bytes); },
                                 command.has("include-unfinished")) >= 0;
  progress.finish();
  if (!staged_ok) {
    std::fprintf(stderr, "sampler-analyze: error: %s\n", error.c_str());
    if (store && !error.starts_with("cannot create a temp")) std::filesystem::remove_all(dir);
    return tool::kExitDataError;
  }
  staged = dir;
  return 0;
}

// ------------------------------------------------------------------------------------------------ plan

constexpr tool::Option kPlanOptions[] = {
    {"budget", 'b', "PERCENT", "the share of a run's CPU time its samples may cost, e.g. 2% (required)"},
    {"output", 'o', "PLAN", "the plan file to write (required)"},
    {"target", 0, "N", "expected samples per run every site should get, budget allowing (default 1)"},
    {"max-probability", 0, "P", "no site sampled with a probability above P (default 1)"},
    {"sample-cost", 0, "NANOSECONDS", "the CPU time of one sample (default 30: docs/analysis.md)"},
    {"walk-cost", 0, "NANOSECONDS", "the CPU time of one slow-side entry that takes no sample (default 3)"},
    {"fast-cost", 0, "NANOSECONDS",
     "turn off (probability 0) the functions whose fast sides alone, at this CPU time a site's execution, would "
     "cost more than the budget (needs --sites)"},
    {"sites", 's', "FILE...", "the program's site information (its ELF files): each site's function, to price walks"},
    {"given-plan", 0, "FILE", "a plan some runs used (their plan subreport names its id); repeatable"},
    {"sparsity", 0, "N", "the uniform rate 1/N of runs whose report has no outcome subreport"},
    {"run-seconds", 0, "S", "the program's own CPU seconds a run, for reports with no outcome subreport"},
    {"database", 0, "URL", "learn from the runs a collector stored (sqlite:PATH or postgresql://...)"},
    {"app", 0, "NAME", "with --database: the application whose runs to learn from"},
    {"version", 0, "V", "with --database: only the runs of this version of the application"},
};

constexpr tool::Usage kPlanUsage = {
    "sampler-analyze plan",
    "--budget PERCENT [OPTIONS] [--sites FILE...] -o PLAN REPORT-OR-DIR...\n"
    "       sampler-analyze plan --budget PERCENT [OPTIONS] -o PLAN --database URL --app NAME [--version V]",
    "Write a sampling plan: per-site probabilities that keep the samples' cost within a budget of each run's CPU\n"
    "time while giving every site the same expected number of samples per run (at least --target, budget\n"
    "allowing).",
    kPlanOptions,
    "Each site's executions per run are estimated from the runs' samples and the probability each run sampled it\n"
    "at: 1/sparsity from the run's outcome subreport, or, when the run used a plan (its plan subreport), that\n"
    "plan's entry (the plan given by --given-plan) and the plan subreport's sparsity. A run whose rate or CPU\n"
    "time is unknown is left out with a warning. The plan raises all sites to one level of expected samples per\n"
    "run, rare sites up to --max-probability, as far as the budget allows (docs/analysis.md, \"Sampling plans\");\n"
    "sites never seen executing are taken at the 95% upper bound of their executions. With --sites, a site\n"
    "beside hotter sites of its function is priced with the slow-side walks its weight causes there. The summary\n"
    "on stderr gives the predicted cost. The plan's id is the SHA-256 of its entries.\n",
};

// "2%", "2", "0.5 %": a percentage above 0 and at most 100, as a share.
bool parse_percent(std::string text, double& share) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (!text.empty() && text.back() == '%') text.pop_back();
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(value > 0) || value > 100) {
    return false;
  }
  share = value / 100;
  return true;
}

// A finite number above 0 (and at most `most`).
bool parse_positive(const std::string& text, double& value, double most = 1e300) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && value > 0 && value <= most;
}

int run_plan(int argc, char** argv) {
  std::string joined;
  std::vector<char*> joined_arguments = tool::join_option_value(argc, argv, "version", joined);
  std::vector<std::string> rest{joined_arguments[0]};
  const std::vector<std::string> sites = analysis::take_sites_arguments(
      std::vector<std::string>(joined_arguments.begin() + 1, joined_arguments.end() - 1), rest,
      analysis::is_site_information_file);
  std::vector<char*> arguments;
  for (std::string& argument : rest) arguments.push_back(argument.data());
  arguments.push_back(nullptr);
  tool::CommandLine command =
      tool::parse_command_line(kPlanUsage, static_cast<int>(arguments.size()) - 1, arguments.data());
  if (command.exit_status) return *command.exit_status;
  auto budget = command.value("budget");
  if (!budget) return tool::usage_error(kPlanUsage, "--budget PERCENT is required");
  analysis::PlanOptions options;
  if (!parse_percent(*budget, options.budget)) {
    return tool::usage_error(kPlanUsage, "--budget needs a percentage above 0 and at most 100, not '" + *budget + "'");
  }
  auto output_path = command.value("output");
  if (!output_path || output_path->empty()) return tool::usage_error(kPlanUsage, "-o PLAN is required");
  struct Number {
    const char* name;
    double& value;
    double most;
    const char* what;
  };
  double sample_nanoseconds = options.sample_seconds * 1e9, walk_nanoseconds = options.walk_seconds * 1e9;
  double fast_nanoseconds = 0;
  double sparsity = 0, run_seconds = 0;
  const Number numbers[] = {
      {"target", options.target, 1e300, "a number above 0"},
      {"max-probability", options.max_probability, 1, "a probability above 0 and at most 1"},
      {"sample-cost", sample_nanoseconds, 1e300, "a number of nanoseconds above 0"},
      {"walk-cost", walk_nanoseconds, 1e300, "a number of nanoseconds above 0"},
      {"fast-cost", fast_nanoseconds, 1e300, "a number of nanoseconds above 0"},
      {"sparsity", sparsity, 1e300, "a number of at least 1"},
      {"run-seconds", run_seconds, 1e300, "a number of seconds above 0"},
  };
  for (const Number& number : numbers) {
    if (auto text = command.value(number.name); text && !parse_positive(*text, number.value, number.most)) {
      return tool::usage_error(kPlanUsage,
                               std::string("--") + number.name + " needs " + number.what + ", not '" + *text + "'");
    }
  }
  if (command.has("sparsity") && sparsity < 1) {
    return tool::usage_error(kPlanUsage, "--sparsity needs a number of at least 1, not '" +
                                             *command.value("sparsity") + "'");
  }
  options.sample_seconds = sample_nanoseconds * 1e-9;
  options.walk_seconds = walk_nanoseconds * 1e-9;
  options.fast_seconds = fast_nanoseconds * 1e-9;
  if ((command.has("app") || command.has("version")) && !command.has("database")) {
    return tool::usage_error(kPlanUsage, "--app and --version go with --database");
  }
  if (command.has("database")) {
    if (!command.has("app")) return tool::usage_error(kPlanUsage, "--database needs --app NAME");
    if (!command.operands.empty()) return tool::usage_error(kPlanUsage, "--database takes no REPORT-OR-DIR");
  } else if (command.operands.empty()) {
    return tool::usage_error(kPlanUsage, "no REPORT-OR-DIR given");
  }

  tool::StderrSink sink("sampler-analyze");
  std::vector<analysis::KnownPlan> plans;
  for (const std::string& file : command.values("given-plan")) {
    analysis::KnownPlan plan;
    if (!analysis::read_plan_file(file, plan, sink)) return tool::kExitDataError;  // named FILE:LINE
    plans.push_back(std::move(plan));
  }
  std::string staged;  // --database: after the given plans, so that a bad one stops the command before it
  std::unique_ptr<sampler::store::Store> store;
  if (command.has("database")) {
    if (int status = stage_database(command, sampler::store::FailureRule(), false, store, staged)) return status;
    command.operands = {staged + "/runs"};
  }
  analysis::UsageOptions usage_options;
  if (command.has("sparsity")) usage_options.sparsity = sparsity;
  if (command.has("run-seconds")) usage_options.run_seconds = run_seconds;
  usage_options.sample_seconds = options.sample_seconds;  // the outcomes' lengths without the runs' own samples
  usage_options.plans = &plans;
  bool ok = true;
  std::vector<std::string> files = analysis::list_reports(command.operands, sink, ok);
  sampler::Progress progress("sampler-analyze plan: reading reports");  // on a terminal only
  usage_options.progress = &progress;
  sink.set_progress(&progress);
  analysis::Usage usage = analysis::read_usage(files, usage_options, sink);
  progress.finish();
  if (!sites.empty()) {
    sampler::SitesIndex index;
    for (const std::string& path : sites) ok = index.add_path(path, sink) && ok;
    if (size_t unnamed = analysis::name_functions(usage, index); unnamed > 0) {
      sink.warning(sites.front(), 0,
                   std::to_string(unnamed) + " sites have no site information in the --sites files: their "
                   "slow-side walks are not priced");
    }
  }
  if (!staged.empty()) std::filesystem::remove_all(staged);
  if (usage.runs == 0) {
    std::fprintf(stderr, "sampler-analyze: error: no run to learn from (%llu left out)\n",
                 static_cast<unsigned long long>(usage.left_out));
    return tool::kExitDataError;
  }
  analysis::Plan plan = analysis::make_plan(usage, options);
  std::string error;
  if (!analysis::write_plan_file(*output_path, plan, error)) {
    sink.error(*output_path, 0, error);
    return tool::kExitDataError;
  }
  std::string summary = analysis::plan_summary(usage, plan, options, *output_path);
  std::fwrite(summary.data(), 1, summary.size(), stderr);
  return ok && sink.errors() == 0 ? tool::kExitSuccess : tool::kExitDataError;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> rest;
  analysis::AnalyzeOptions options;
  if (argc > 1 && std::strcmp(argv[1], "plan") == 0) {
    argv[1] = argv[0];
    return run_plan(argc - 1, argv + 1);
  }
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
  if (command.has("database")) {
    if (!command.has("app")) return tool::usage_error(kUsage, "--database needs --app NAME");
    if (!command.operands.empty()) return tool::usage_error(kUsage, "--database takes no REPORT-OR-DIR");
    sampler::store::FailureRule rule;
    std::string rule_error;
    if (auto statuses = command.value("failure-statuses");
        statuses && !sampler::store::parse_failure_statuses(*statuses, rule, rule_error)) {
      return tool::usage_error(kUsage, rule_error);
    }
    if (int status = stage_database(command, rule, !command.has("labels"), store, staged)) return status;
    command.operands = {staged + "/runs"};
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
