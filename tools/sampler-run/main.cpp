// sampler-run: runs an instrumented program with sampling on and sends its report to a collector
// (docs/collection.md).
//
//   sampler-run --app wordfreq --upload http://127.0.0.1:8080 --api-key KEY -- ./wordfreq input.txt
//
// Exits with the program's exit status, or dies of the program's fatal signal. The work is in launcher/.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "launcher/launcher.h"
#include "sections/diagnostics.h"
#include "tool.h"

namespace {

namespace tool = sampler::tool;
namespace launcher = sampler::launcher;

constexpr tool::Option kOptions[] = {
    {"app", 'a', "NAME", "the application's name, as the collector's keys file has it (required)"},
    {"version", 0, "V", "the application's version, recorded in the outcome"},
    {"upload", 'u', "URL", "the collector (SAMPLER_UPLOAD_URL); without one, nothing is sent"},
    {"api-key", 'k', "KEY", "the application's API key (SAMPLER_API_KEY)"},
    {"keep", 0, "DIR", "also keep a copy of each report as DIR/RUNID.report"},
    {"ca-file", 0, "PEM", "trust the certificate authorities in PEM for an https collector (default: the system's)"},
    {"sparsity", 0, "N", "mean opportunities per sample (SAMPLER_SPARSITY; default 100)"},
    {"seed", 0, "N", "sampling seed (SAMPLER_SEED; default: random, recorded in the outcome)"},
    {"plan", 0, "FILE", "sampling plan: each site its own rate (SAMPLER_PLAN; default: the collector's, if any)"},
    {"no-plan", 0, nullptr, "no sampling plan, neither given nor the collector's: every site at 1/sparsity"},
    {"config", 0, "FILE", "configuration file (default ~/.config/sampler/run.conf)"},
    {"spool", 0, "DIR", "where reports wait while the collector is unreachable (default ~/.cache/sampler/spool)"},
    {"upload-timeout-ms", 0, "MS", "the most uploading may delay the program's exit (default 2000)"},
    {"interval", 0, "SECONDS", "while the program runs, send its counters so far every SECONDS (interim reports)"},
    {"show-last", 0, nullptr, "print the last report sent or spooled, and what became of it, then exit"},
    {"recover", 0, "NAME", "print the report of a run made with SAMPLER_FILE=NAME%c, from NAME.counters if need be"},
    {"verbose", 'v', nullptr, "say on stderr what was sent, spooled or dropped"},
};

constexpr tool::Usage kUsage = {
    "sampler-run",
    "--app NAME [--upload URL --api-key KEY] [--keep DIR] [OPTIONS] -- PROGRAM ARGS...\n"
    "       sampler-run --show-last\n"
    "       sampler-run --recover NAME",
    "Run an instrumented program with sampling on and send its report, with an outcome, to a collector.",
    kOptions,
    "The program's standard streams, signals and exit status are its own: sampler-run exits with its exit status\n"
    "or dies of its signal, and prints nothing unless --verbose. The report goes to the program on a private\n"
    "descriptor (SAMPLER_REPORT_FD), gets an 'outcome' subreport (exit status or signal, times, sparsity, seed,\n"
    "build IDs, run id) and is uploaded gzip-compressed; when the collector cannot be reached it waits in the\n"
    "spool (at most 10 MB and 7 days) and goes with a later run. Settings come from the options, then the\n"
    "environment, then the configuration file (KEY = VALUE lines; 'enabled = no' opts out: the program then runs\n"
    "without sampling and nothing is sent). If PROGRAM cannot be run, the exit status is 127 (not found) or 126.\n"
    "With --interval, sampler-run reads the program's counters from outside every SECONDS and sends them as an\n"
    "interim report of the same run (the collector keeps the latest; the final report replaces it).\n"
    "A sampling plan (--plan FILE) is checked before the program starts (a bad one: exit status 2) and given to it\n"
    "as SAMPLER_PLAN. Without --plan or --no-plan, a run gets the collector's current plan of its application and\n"
    "release, fetched after an earlier upload and cached in ~/.cache/sampler/plans.\n"
    "--recover NAME reads what a run made without sampler-run left, with %c in SAMPLER_FILE (counters in a file\n"
    "mapping, NAME.counters beside the report NAME): it prints NAME when it holds a whole report, else the samples\n"
    "counted up to the run's end, whatever killed it (SIGKILL, the OOM killer). Exit status 1 when there is no\n"
    "report, or the counters file is not one or is damaged.\n",
};

}  // namespace

int main(int argc, char** argv) {
  // "--version V" is the application's version; a lone --version is ours.
  std::string joined;
  std::vector<char*> arguments = tool::join_option_value(argc, argv, "version", joined);
  argc = static_cast<int>(arguments.size()) - 1;
  argv = arguments.data();
  // Options end at "--" or at the program's name: what follows belongs to the program.
  int split = 1;
  while (split < argc) {
    std::string_view arg = argv[split];
    if (arg == "--") break;
    if (!arg.starts_with("-")) break;
    bool takes_value = false;
    for (const tool::Option& option : kOptions) {
      if (option.argument == nullptr) continue;
      std::string name = std::string("--") + option.long_name;
      std::string short_name = option.short_name ? std::string("-") + option.short_name : std::string();
      if (arg == name || (!short_name.empty() && arg == short_name)) takes_value = true;
    }
    split += takes_value ? 2 : 1;
  }
  if (split > argc) split = argc;
  std::vector<char*> ours(argv, argv + split);
  std::vector<std::string> program;
  int first_program_arg = split < argc && std::string_view(argv[split]) == "--" ? split + 1 : split;
  for (int i = first_program_arg; i < argc; ++i) program.emplace_back(argv[i]);
  ours.push_back(nullptr);
  tool::CommandLine command = tool::parse_command_line(kUsage, split, ours.data());
  if (command.exit_status) return *command.exit_status;

  launcher::LaunchSettings settings;
  settings.verbose = command.has("verbose");
  launcher::UserDirs dirs = launcher::default_user_dirs();
  if (!dirs.why.empty() && settings.verbose) {
    std::fprintf(stderr, "sampler-run: no private home directory (%s): %s\n", sampler::escape_control_characters(dirs.why).c_str(),
                 dirs.config_file.empty() ? "no configuration file, spool or --show-last"
                                          : "no spool or --show-last");
  }
  settings.spool_dir = dirs.spool_dir;
  settings.state_dir = dirs.state_dir;
  std::string config = command.value("config").value_or(dirs.config_file);
  bool found = false;
  std::string error, refused;
  if (!config.empty() &&
      !launcher::read_config(config, !command.has("config"), settings, found, error, refused)) {
    size_t colon = error.find(':');
    std::fprintf(stderr, "sampler-run: '%s':%s: error:%s\n", config.c_str(), error.substr(5, colon - 5).c_str(),
                 error.substr(colon + 1).c_str());
    return tool::kExitUsage;
  }
  if (command.has("config") && !found) return tool::usage_error(kUsage, "cannot read '" + config + "'");
  if (!refused.empty() && settings.verbose) {
    std::fprintf(stderr, "sampler-run: configuration not read: %s\n", sampler::escape_control_characters(refused).c_str());
  }
  auto from_env = [](const char* name, std::string& value) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') value = v;
  };
  from_env("SAMPLER_UPLOAD_URL", settings.upload_url);
  from_env("SAMPLER_API_KEY", settings.api_key);
  from_env("SAMPLER_SPARSITY", settings.sparsity);
  from_env("SAMPLER_SEED", settings.seed);
  from_env("SAMPLER_PLAN", settings.plan);
  auto from_option = [&command](const char* name, std::string& value) {
    if (std::optional<std::string> v = command.value(name)) value = *v;
  };
  from_option("app", settings.app);
  from_option("version", settings.version);
  from_option("upload", settings.upload_url);
  from_option("api-key", settings.api_key);
  from_option("keep", settings.keep_dir);
  from_option("ca-file", settings.ca_file);
  from_option("sparsity", settings.sparsity);
  from_option("seed", settings.seed);
  from_option("spool", settings.spool_dir);
  from_option("plan", settings.plan);
  settings.no_plan = command.has("no-plan");
  if (settings.no_plan && command.has("plan")) {
    return tool::usage_error(kUsage, "--plan and --no-plan exclude each other");
  }
  if (std::optional<std::string> ms = command.value("upload-timeout-ms")) {
    char* end = nullptr;
    settings.upload_timeout_ms = std::strtoull(ms->c_str(), &end, 10);
    if (ms->empty() || *end != '\0') return tool::usage_error(kUsage, "--upload-timeout-ms wants a number of ms");
  }

  if (std::optional<std::string> seconds = command.value("interval")) {
    char* end = nullptr;
    settings.interval_seconds = std::strtoull(seconds->c_str(), &end, 10);
    if (seconds->empty() || *end != '\0' || (*seconds)[0] == '-' || settings.interval_seconds == 0 ||
        settings.interval_seconds > launcher::kMaxIntervalSeconds) {
      return tool::usage_error(kUsage, "--interval wants a whole number of seconds, 1 or more");
    }
  }
  if (command.has("show-last")) return launcher::show_last(settings);
  if (std::optional<std::string> name = command.value("recover")) {
    if (!command.operands.empty() || !program.empty()) {
      return tool::usage_error(kUsage, "--recover NAME takes no program");
    }
    tool::Output output;
    tool::StderrSink sink(kUsage.program, &output);
    std::string report;
    const bool ok = launcher::recover_report(*name, report, sink);
    output.write(report);
    const bool written = tool::finish_output(output, sink);
    return ok && written ? tool::kExitSuccess : tool::kExitDataError;
  }
  if (!command.operands.empty()) {
    return tool::usage_error(kUsage, "unexpected operand '" + command.operands[0] + "' (put the program after --)");
  }
  if (program.empty()) return tool::usage_error(kUsage, "missing PROGRAM (after --)");
  if (settings.enabled) {
    if (settings.app.empty()) return tool::usage_error(kUsage, "--app is required");
    if (!settings.upload_url.empty() && settings.api_key.empty()) {
      return tool::usage_error(kUsage, "an upload URL needs an API key (--api-key or SAMPLER_API_KEY)");
    }
  }
  return launcher::launch(settings, program);
}
