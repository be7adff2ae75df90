// Behaviour of libsampler as a user sees it (docs/instrumenting.md section 2): the example programs run under chosen
// environments, their reports read back with the formats library. Exact counts at sparsity 1, fairness at
// sparsity 100, plugins, threads, fork, the report destinations, and a crash report for every signal whose
// stack llvm-symbolizer resolves to the crashing function.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sections/backtrace.h"
#include "sections/cbf_decode.h"
#include "sections/diagnostics.h"
#include "sections/line_reader.h"
#include "test_util.h"

namespace sampler::testing {
namespace {

const std::string kExample = SAMPLER_EXAMPLE;
const std::string kExampleStatic = SAMPLER_EXAMPLE_STATIC;
const std::string kUninstrumented = SAMPLER_EXAMPLE_UNINSTRUMENTED;
const std::string kHost = SAMPLER_EXAMPLE_HOST;
const std::string kPlainHost = SAMPLER_EXAMPLE_PLAIN_HOST;
const std::string kPlugin = SAMPLER_EXAMPLE_PLUGIN;
const std::string kThreads = SAMPLER_EXAMPLE_THREADS;
const std::string kSymbolizer = SAMPLER_LLVM_SYMBOLIZER;

const std::string kExampleUnit = "5a3d1c0e9b8f47d2a6c4e1f0b3d5a7c9";
const std::string kPluginUnit = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
const std::string kHostUnit = "7c6b5a49382716050f1e2d3c4b5a6978";
const std::string kThreadsUnit = "c0ffee00c0ffee00c0ffee00c0ffee00";

using Rows = std::vector<std::vector<uint64_t>>;

/// Runs `argv` with sampling at `sparsity` into a fresh report file; returns the report's text.
std::string report_of(const std::vector<std::string>& argv, const std::string& sparsity,
                      const std::string& seed = "", RunResult* result = nullptr) {
  std::string file = make_temp_dir() + "/report.txt";
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = sparsity;
  options.env["SAMPLER_FILE"] = file;
  if (!seed.empty()) options.env["SAMPLER_SEED"] = seed;
  RunResult r = run(argv, options);
  if (result != nullptr) *result = r;
  EXPECT_EQ(r.err, "");
  return read_file(file);
}

/// The one samples section of (unit, scheme), as numbers.
Rows samples(const ParsedReport& report, const std::string& unit, const std::string& scheme,
             const std::string& kind = "samples", const std::string& when = "") {
  for (const Section& s : report.sections) {
    if (s.unit == unit && s.scheme == scheme && s.kind == kind && s.when == when) return numbers(s);
  }
  ADD_FAILURE() << "no " << kind << " section for " << unit << " " << scheme << " " << when;
  return {};
}

void expect_well_formed(const ParsedReport& report, const std::vector<std::string>& ids) {
  EXPECT_EQ(report.subreport_ids, ids);
  for (bool complete : report.subreport_complete) EXPECT_TRUE(complete);
  EXPECT_TRUE(report.diagnostics.empty()) << report.diagnostics.front();
  for (const Section& s : report.sections) EXPECT_TRUE(s.complete) << s.scheme;
}

uint64_t share(uint64_t n, uint64_t modulus, uint64_t residue) { return n / modulus + (residue < n % modulus); }

/// "0x" and at least one lower-case hex digit; with `even`, an even number of them (symbolizer markup's %p).
bool is_hex_address(const std::string& text, bool even = false) {
  if (text.size() < 3 || text.compare(0, 2, "0x") != 0) return false;
  for (size_t i = 2; i < text.size(); ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(text[i])) || std::isupper(static_cast<unsigned char>(text[i]))) {
      return false;
    }
  }
  return !even || (text.size() - 2) % 2 == 0;
}

/// Splits a markup element "{{{a:b:c}}}" into its fields, or returns nothing if `line` is not one.
std::vector<std::string> markup_fields(const std::string& line) {
  if (line.size() < 6 || line.compare(0, 3, "{{{") != 0 || line.compare(line.size() - 3, 3, "}}}") != 0) return {};
  std::vector<std::string> fields;
  std::string inner = line.substr(3, line.size() - 6);
  size_t start = 0;
  for (;;) {
    size_t colon = inner.find(':', start);
    fields.push_back(inner.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return fields;
}

// ------------------------------------------------------------------------------ exact counts, sparsity 1

/// Every counter of example 1 after `run N` at sparsity 1, from the workload's closed form (examples/
/// sampler_example.c, work()).
void expect_exact_example_counts(const ParsedReport& report, uint64_t n) {
  const std::string& u = kExampleUnit;
  EXPECT_EQ(samples(report, u, "function-entries"), (Rows{{n}, {0}}));
  EXPECT_EQ(samples(report, u, "branches"),
            (Rows{{n / 2, n - n / 2}, {n - (n + 2) / 3, (n + 2) / 3}, {0, 0}}));
  EXPECT_EQ(samples(report, u, "returns"), (Rows{{std::min<uint64_t>(n, 10), n > 10 ? 1u : 0u, n > 11 ? n - 11 : 0}}));
  EXPECT_EQ(samples(report, u, "scalar-pairs"), (Rows{{n / 2, 1, n - n / 2 - 1}}));
  Rows kinds = samples(report, u, "float-kinds");
  ASSERT_EQ(kinds.size(), 2u);
  for (uint64_t k = 0; k < 9; ++k) EXPECT_EQ(kinds[0][k], share(n, 9, k)) << "float kind " << k;
  EXPECT_EQ(kinds[1], (std::vector<uint64_t>{0, 0, 0, 0, 0, (n + 2) / 3, n - (n + 2) / 3, 0, 0}));
  EXPECT_EQ(samples(report, u, "atoms"), (Rows{{n, 0}}));
  EXPECT_EQ(samples(report, u, "g-object-unref"), (Rows{{share(n, 4, 0), share(n, 4, 1), share(n, 4, 2), share(n, 4, 3)}}));
  EXPECT_EQ(samples(report, u, "coverage"), (Rows{{n}, {0}}));
  EXPECT_EQ(samples(report, u, "data"), (Rows{{n}}));
  EXPECT_EQ(samples(report, u, "example-tuple"),
            (Rows{{share(n, 5, 0), share(n, 5, 1), share(n, 5, 2), share(n, 5, 3), share(n, 5, 4)}}));
  // Timestamps: seven stamped samples per iteration (two branches, two float kinds, three bounds), in order.
  uint64_t last = 7 * (n - 1);
  EXPECT_EQ(samples(report, u, "branches", "timestamps", "first"), (Rows{{1}, {2}, {0}}));
  EXPECT_EQ(samples(report, u, "branches", "timestamps", "last"), (Rows{{last + 1}, {last + 2}, {0}}));
  EXPECT_EQ(samples(report, u, "float-kinds", "timestamps", "last"), (Rows{{last + 3}, {last + 4}}));
  EXPECT_EQ(samples(report, u, "bounds", "timestamps", "first"), (Rows{{5}, {6}, {7}, {0}}));
  // Bounds, as the text shows them: i - 5 as int, 7i mod 256 as unsigned char (n >= 256 reaches every byte),
  // a pointer into a 4-int array, and an unsampled short (its type's identities).
  auto bounds = find_sections(report, u, "bounds");
  ASSERT_EQ(bounds.size(), 1u);
  const auto& rows = bounds[0]->rows;
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"-5", std::to_string(static_cast<int64_t>(n) - 6)}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"0", "255"}));
  ASSERT_EQ(rows[2].size(), 2u);
  ASSERT_TRUE(is_hex_address(rows[2][0])) << rows[2][0];
  ASSERT_TRUE(is_hex_address(rows[2][1])) << rows[2][1];
  EXPECT_EQ(std::stoull(rows[2][1], nullptr, 16) - std::stoull(rows[2][0], nullptr, 16), 3 * sizeof(int));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"32767", "-32768"}));
}

TEST(ExactCounts, EverySchemeAtSparsityOne) {
  const uint64_t n = 300;
  ParsedReport report = parse_report(report_of({kExample, "run", std::to_string(n)}, "1"));
  expect_well_formed(report, {"samples"});
  expect_exact_example_counts(report, n);
}

TEST(ExactCounts, StaticLibraryGivesTheSameCounts) {
  const uint64_t n = 1000;
  ParsedReport report = parse_report(report_of({kExampleStatic, "run", std::to_string(n)}, "1"));
  expect_well_formed(report, {"samples"});
  expect_exact_example_counts(report, n);
}

TEST(ExactCounts, EightThreadsLoseNoCounts) {
  const uint64_t threads = 8, n = 200000;
  ParsedReport report = parse_report(report_of({kThreads, std::to_string(threads), std::to_string(n)}, "1"));
  expect_well_formed(report, {"samples"});
  EXPECT_EQ(samples(report, kThreadsUnit, "coverage"), (Rows{{threads * n}}));
  EXPECT_EQ(samples(report, kThreadsUnit, "branches"), (Rows{{threads * (n / 2), threads * (n - n / 2)}}));
  Rows per_thread = samples(report, kThreadsUnit, "per-thread");
  ASSERT_EQ(per_thread.size(), 1u);
  ASSERT_EQ(per_thread[0].size(), 64u);
  for (uint64_t t = 0; t < 64; ++t) EXPECT_EQ(per_thread[0][t], t < threads ? n : 0) << "thread " << t;
  // The last timestamp is the logical clock's last tick: one per sampled branch.
  EXPECT_EQ(samples(report, kThreadsUnit, "branches", "timestamps", "last"), (Rows{{threads * n}}));
}

TEST(ExactCounts, SparsityUnsetNeverSamples) {
  std::string file = make_temp_dir() + "/report.txt";
  RunOptions options;
  options.env["SAMPLER_FILE"] = file;
  RunResult r = run({kExample, "run", "100"}, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  ParsedReport unset = parse_report(read_file(file));
  expect_well_formed(unset, {"samples"});
  EXPECT_EQ(samples(unset, kExampleUnit, "coverage"), (Rows{{0}, {0}}));
}

TEST(ExactCounts, HugeSparsityAlmostNeverSamples) {
  // 1 - 1/S rounds to 1 from S = 2^53 on: the draw must still be a long countdown, never "every time".
  for (const char* sparsity : {"1e15", "2e16", "1e300"}) {
    SCOPED_TRACE(sparsity);
    ParsedReport report = parse_report(report_of({kExample, "run", "1000"}, sparsity, "42"));
    expect_well_formed(report, {"samples"});
    EXPECT_EQ(samples(report, kExampleUnit, "function-entries"), (Rows{{0}, {0}}));
    EXPECT_EQ(samples(report, kExampleUnit, "coverage"), (Rows{{0}, {0}}));
  }
}

// ------------------------------------------------------------------------------------- fairness, sparsity 100

/// Within 5 standard deviations of the binomial mean n/s.
void expect_fair(uint64_t taken, uint64_t n, double sparsity, const std::string& what) {
  double p = 1.0 / sparsity;
  double mean = n * p, sd = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(taken), mean, 5 * sd) << what;
}

TEST(Fairness, OneThreadAndTheSameSeedGivesTheSameReport) {
  const uint64_t n = 1000000;
  std::vector<std::string> argv = {kThreads, "1", std::to_string(n)};
  std::string first = report_of(argv, "100", "12345");
  std::string again = report_of(argv, "100", "12345");
  std::string other = report_of(argv, "100", "0x3039f");
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  ParsedReport report = parse_report(first);
  expect_well_formed(report, {"samples"});
  // Three sites per iteration share one countdown: each is taken independently with probability 1/100.
  expect_fair(samples(report, kThreadsUnit, "coverage")[0][0], n, 100, "coverage");
  Rows branches = samples(report, kThreadsUnit, "branches");
  expect_fair(branches[0][0] + branches[0][1], n, 100, "branches");
  expect_fair(samples(report, kThreadsUnit, "per-thread")[0][0], n, 100, "per-thread");
}

TEST(Fairness, EveryThreadGetsItsShare) {
  const uint64_t threads = 8, n = 1000000;
  ParsedReport report = parse_report(report_of({kThreads, std::to_string(threads), std::to_string(n)}, "100", "7"));
  expect_well_formed(report, {"samples"});
  Rows per_thread = samples(report, kThreadsUnit, "per-thread");
  for (uint64_t t = 0; t < threads; ++t) expect_fair(per_thread[0][t], n, 100, "thread " + std::to_string(t));
  expect_fair(samples(report, kThreadsUnit, "coverage")[0][0], threads * n, 100, "all threads");
}

TEST(Fairness, FractionalSparsity) {
  const uint64_t n = 1000000;
  ParsedReport report = parse_report(report_of({kThreads, "1", std::to_string(n)}, "2.5", "99"));
  expect_fair(samples(report, kThreadsUnit, "coverage")[0][0], n, 2.5, "sparsity 2.5");
}

// ---------------------------------------------------------------------------------------- plugins and fork

TEST(Plugin, EachDlcloseWritesTheUnitsSamples) {
  RunResult r;
  ParsedReport report = parse_report(report_of({kHost, kPlugin, "2", "10"}, "1", "", &r));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "load 0: 5 odd\nload 1: 5 odd\n");
  expect_well_formed(report, {"samples"});
  // Load 0 ran plugin_work(10), load 1 plugin_work(11): two sections per scheme, each from zero.
  auto entries = find_sections(report, kPluginUnit, "function-entries");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(numbers(*entries[0]), (Rows{{1}}));
  EXPECT_EQ(numbers(*entries[1]), (Rows{{1}}));
  auto branches = find_sections(report, kPluginUnit, "branches");
  ASSERT_EQ(branches.size(), 2u);
  EXPECT_EQ(numbers(*branches[0]), (Rows{{5, 5}}));
  EXPECT_EQ(numbers(*branches[1]), (Rows{{6, 5}}));
  auto bounds = find_sections(report, kPluginUnit, "bounds");
  ASSERT_EQ(bounds.size(), 2u);
  EXPECT_EQ(bounds[0]->rows, (std::vector<std::vector<std::string>>{{"10", "10"}}));
  EXPECT_EQ(bounds[1]->rows, (std::vector<std::vector<std::string>>{{"11", "11"}}));
  EXPECT_EQ(samples(report, kHostUnit, "coverage"), (Rows{{2}}));
  // The plugin's sections come before the host's: written at each dlclose, the host's at exit.
  EXPECT_EQ(report.sections.back().unit, kHostUnit);
}

TEST(Plugin, TheRuntimeLoadedByAPluginStaysAndReportsAtExit) {
  // The host is not instrumented: libsampler.so comes in with the plugin's first dlopen (its initial-exec TLS
  // from the loader's static reserve) and, marked nodelete, stays loaded after each dlclose.
  RunResult r;
  ParsedReport report = parse_report(report_of({kPlainHost, kPlugin, "3", "4"}, "1", "", &r));
  EXPECT_EQ(r.exit_code, 0);
  expect_well_formed(report, {"samples"});
  auto branches = find_sections(report, kPluginUnit, "branches");
  ASSERT_EQ(branches.size(), 3u);
  EXPECT_EQ(numbers(*branches[0]), (Rows{{2, 2}}));
  EXPECT_EQ(numbers(*branches[1]), (Rows{{3, 2}}));
  EXPECT_EQ(numbers(*branches[2]), (Rows{{3, 3}}));
  EXPECT_TRUE(find_sections(report, kHostUnit, "coverage").empty());
}

TEST(Fork, TheChildLeavesTheParentsReportAlone) {
  for (const char* mode : {"exit", "crash"}) {
    SCOPED_TRACE(mode);
    std::vector<std::string> argv = {kExample, "fork", "300"};
    if (std::string(mode) == "crash") argv.push_back("crash");
    RunResult r;
    ParsedReport report = parse_report(report_of(argv, "1", "", &r));
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, std::string(mode) == "crash" ? "child signal 11\n" : "child exit 0\n");
    expect_well_formed(report, {"samples"});
    // The parent's counts only: the child's run and its own site are not there.
    expect_exact_example_counts(report, 300);
  }
}

// ------------------------------------------------------------------------------------ report destinations

TEST(Destination, ReportDescriptor) {
  std::string dir = make_temp_dir();
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_REPORT_FD"] = "3";
  options.env["SAMPLER_FILE"] = dir + "/ignored.txt";  // SAMPLER_REPORT_FD wins
  options.fd3_file = dir + "/fd3.txt";
  RunResult r = run({kExample, "run", "300"}, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(file_exists(dir + "/ignored.txt"));
  ParsedReport report = parse_report(read_file(dir + "/fd3.txt"));
  expect_well_formed(report, {"samples"});
  expect_exact_example_counts(report, 300);
}

TEST(Destination, ProcessIdInTheFileName) {
  std::string dir = make_temp_dir();
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_FILE"] = dir + "/report.%p.%%";
  RunResult r = run({kExample, "run", "10"}, options);
  EXPECT_EQ(r.exit_code, 0);
  std::string expected = dir + "/report." + std::to_string(r.pid) + ".%";
  ASSERT_TRUE(file_exists(expected)) << expected;
  expect_well_formed(parse_report(read_file(expected)), {"samples"});
}

TEST(Destination, NoDestinationNoReport) {
  std::string dir = make_temp_dir();
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  RunResult r = run({kExample, "run", "10"}, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(Destination, FinishReportBeforeUnderscoreExit) {
  ParsedReport report = parse_report(report_of({kExample, "finish", "300"}, "1"));
  expect_well_formed(report, {"samples"});
  expect_exact_example_counts(report, 300);
}

TEST(Destination, ReportTruncatesAnOldFile) {
  std::string file = make_temp_dir() + "/report.txt";
  {
    std::FILE* old = std::fopen(file.c_str(), "w");
    std::fputs(std::string(100000, 'x').c_str(), old);
    std::fclose(old);
  }
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_FILE"] = file;
  run({kExample, "run", "10"}, options);
  expect_well_formed(parse_report(read_file(file)), {"samples"});
}

TEST(Destination, HostNameAndTimeInTheFileName) {
  std::string dir = make_temp_dir();
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_FILE"] = dir + "/report.%h.%t.%p";
  const time_t before = time(nullptr);
  RunResult r = run({kExample, "run", "10"}, options);
  const time_t after = time(nullptr);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  ASSERT_EQ(names.size(), 1u);
  const std::string prefix = std::string("report.") + host + ".";
  const std::string suffix = "." + std::to_string(r.pid);
  ASSERT_EQ(names[0].rfind(prefix, 0), 0u) << names[0];
  ASSERT_GT(names[0].size(), prefix.size() + suffix.size()) << names[0];
  ASSERT_EQ(names[0].substr(names[0].size() - suffix.size()), suffix) << names[0];
  const std::string seconds = names[0].substr(prefix.size(), names[0].size() - prefix.size() - suffix.size());
  const time_t at = static_cast<time_t>(std::stoll(seconds));
  EXPECT_GE(at, before);
  EXPECT_LE(at, after);
  expect_well_formed(parse_report(read_file(dir + "/" + names[0])), {"samples"});
}

TEST(Destination, ReportFileIsPrivate) {
  // A crash report holds the process's address-space layout, as a core dump does: created 0600 like one.
  std::string file = make_temp_dir() + "/report.txt";
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_FILE"] = file;
  const mode_t old_mask = umask(022);
  RunResult r = run({kExample, "crash", "segv"}, options);
  umask(old_mask);
  EXPECT_EQ(r.signal, SIGSEGV);
  struct stat status {};
  ASSERT_EQ(stat(file.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0600u);
  expect_well_formed(parse_report(read_file(file)), {"samples", "main-backtrace"});
}

TEST(Destination, SymbolicLinkIsNotFollowed) {
  // SAMPLER_FILE naming a symbolic link (planted in a shared directory, say) is refused: nothing is created or
  // truncated where it points.
  std::string dir = make_temp_dir();
  const std::string target = dir + "/target", link = dir + "/report.txt";
  { std::FILE* f = std::fopen(target.c_str(), "w"); std::fputs("keep\n", f); std::fclose(f); }
  std::filesystem::create_symlink(target, link);
  std::filesystem::create_symlink(dir + "/missing", dir + "/dangling");
  for (const std::string& name : {link, dir + "/dangling"}) {
    SCOPED_TRACE(name);
    RunOptions options;
    options.env["SAMPLER_SPARSITY"] = "1";
    options.env["SAMPLER_FILE"] = name;
    RunResult r = run({kExample, "run", "10"}, options);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.err, "sampler: SAMPLER_FILE: cannot create '" + name + "': it is a symbolic link; no report\n");
  }
  EXPECT_EQ(read_file(target), "keep\n");
  EXPECT_FALSE(file_exists(dir + "/missing"));
}

TEST(Destination, FifoWithoutReaderIsSkipped) {
  // A FIFO no one reads would hold the program before main (open() waits for a reader): it is skipped at once.
  std::string fifo = make_temp_dir() + "/report.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_FILE"] = fifo;
  options.env["SAMPLER_VERBOSE"] = "1";
  RunResult r = run({kExample, "run", "10"}, options);
  EXPECT_EQ(r.exit_code, 0);
  const std::string line = "sampler: SAMPLER_FILE: '" + fifo + "' is a FIFO that no one reads; no report\n";
  size_t at = r.err.find(line);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << "said more than once: " << r.err;
}

TEST(Destination, FifoWithReaderGetsTheReport) {
  std::string fifo = make_temp_dir() + "/report.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_FILE"] = fifo;
  RunResult r = run({kExample, "run", "1"}, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(reader, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  close(reader);
  expect_well_formed(parse_report(text), {"samples"});
}

TEST(Destination, FifoOfAnotherUserIsRefused) {
  // The owner check holds for every kind of file: a FIFO another user made would hand that user the report.
  if (geteuid() != 0) GTEST_SKIP() << "making a FIFO of another user needs root";
  std::string fifo = make_temp_dir() + "/report.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  ASSERT_EQ(chown(fifo.c_str(), 65534, 65534), 0);
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_FILE"] = fifo;
  RunResult r = run({kExample, "run", "1"}, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "sampler: SAMPLER_FILE: '" + fifo + "' belongs to another user; no report\n");
  char byte = 0;
  EXPECT_LE(read(reader, &byte, 1), 0) << "the report reached another user's FIFO";
  close(reader);
}

TEST(Destination, HardLinkedFileIsLeftAlone) {
  // A second name for a file of the same owner (a hard link planted in a shared directory): not truncated.
  std::string dir = make_temp_dir();
  const std::string target = dir + "/target", link = dir + "/report.txt";
  { std::FILE* f = std::fopen(target.c_str(), "w"); std::fputs("keep\n", f); std::fclose(f); }
  std::filesystem::create_hard_link(target, link);
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  options.env["SAMPLER_FILE"] = link;
  RunResult r = run({kExample, "run", "10"}, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "sampler: SAMPLER_FILE: '" + link + "' has other names (hard links); no report\n");
  EXPECT_EQ(read_file(target), "keep\n");
}

// ------------------------------------------------------------------------------------ privileged programs

/// Sets `mode` on `path` and on each of its parent directories up to (not including) the system's temporary
/// directory, so that another user can reach it.
void open_path_to_others(const std::filesystem::path& path) {
  const std::filesystem::path top = std::filesystem::temp_directory_path();
  for (std::filesystem::path p = path; !p.empty() && p != top && p != p.root_path(); p = p.parent_path()) {
    std::filesystem::permissions(p, std::filesystem::perms::others_exec | std::filesystem::perms::group_exec |
                                        std::filesystem::perms::others_read | std::filesystem::perms::group_read,
                                 std::filesystem::perm_options::add);
  }
}

/// A setuid-root copy of `program` in `dir`.
std::string setuid_copy(const std::string& program, const std::string& dir) {
  const std::string copy = dir + "/" + std::filesystem::path(program).filename().string();
  std::filesystem::copy_file(program, copy);
  EXPECT_EQ(chown(copy.c_str(), 0, 0), 0);
  EXPECT_EQ(chmod(copy.c_str(), 04755), 0);
  return copy;
}

TEST(Privileged, SetuidProgramIgnoresTheEnvironment) {
  // An unprivileged user runs an instrumented setuid-root program (AT_SECURE): the SAMPLER_* variables are theirs,
  // so none is obeyed (as glibc's secure_getenv), or they could make root overwrite any file.
  if (geteuid() != 0) GTEST_SKIP() << "making a setuid-root copy of a program needs root";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv to run it as an unprivileged user";
  const std::string dir = make_temp_dir();
  open_path_to_others(dir);
  const std::vector<std::string> as_nobody = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                              "--clear-groups"};
  // Whether setuid takes effect here at all (not on a nosuid mount, not in a user namespace without root).
  std::vector<std::string> probe = as_nobody;
  probe.push_back(setuid_copy("/usr/bin/id", dir));
  RunResult id = run(probe);
  if (id.exit_code != 0 || id.out.find("euid=0(") == std::string::npos) {
    GTEST_SKIP() << "a setuid-root program does not run as root here (nosuid mount?): " << id.out << id.err;
  }
  const std::string victim = dir + "/victim";
  { std::FILE* f = std::fopen(victim.c_str(), "w"); std::fputs("root's file\n", f); std::fclose(f); }
  for (const std::string& program : {kExample, kExampleStatic}) {
    SCOPED_TRACE(program);
    std::vector<std::string> argv = as_nobody;
    argv.push_back(setuid_copy(program, make_temp_dir()));
    open_path_to_others(std::filesystem::path(argv.back()).parent_path());
    argv.insert(argv.end(), {"run", "10"});
    // Overwriting a file of root's, creating one where nobody may, the report on a descriptor: all ignored.
    const std::vector<std::map<std::string, std::string>> attempts = {
        {{"SAMPLER_SPARSITY", "1"}, {"SAMPLER_FILE", victim}},
        {{"SAMPLER_SPARSITY", "1"}, {"SAMPLER_FILE", dir + "/created-%p"}},
        // A counters file beside the report (%c): no more created than the report.
        {{"SAMPLER_SPARSITY", "1"}, {"SAMPLER_FILE", dir + "/created-%p%c"}},
        {{"SAMPLER_SPARSITY", "1"}, {"SAMPLER_REPORT_FD", "2"}},
        // Not a file it could map: obeyed, it would say so on stderr; ignored, nothing is said.
        {{"SAMPLER_SPARSITY", "1"}, {"SAMPLER_SHARED_FD", "2"}},
        // An invalid interval: obeyed, it would say so; ignored, nothing is said.
        {{"SAMPLER_SPARSITY", "1"}, {"SAMPLER_INTERVAL", "0"}},
    };
    for (const auto& env : attempts) {
      RunOptions options;
      options.env = env;
      RunResult r = run(argv, options);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.err, "");
    }
    EXPECT_EQ(read_file(victim), "root's file\n");
    // Under SAMPLER_VERBOSE, the one line that says so, and nothing else.
    RunOptions verbose;
    verbose.env = {{"SAMPLER_SPARSITY", "1"}, {"SAMPLER_FILE", victim}, {"SAMPLER_INTERVAL", "1"},
                   {"SAMPLER_VERBOSE", "1"}};
    RunResult r = run(argv, verbose);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.err,
              "sampler: running with privileges its user does not have (setuid, setgid or file capabilities): "
              "every SAMPLER_* variable is ignored\n");
    EXPECT_EQ(read_file(victim), "root's file\n");
    // And they are gone from the environment: a child the program runs as root (after setuid(0), say) must not
    // obey them either.
    std::vector<std::string> env_argv(argv.begin(), argv.end() - 2);
    env_argv.insert(env_argv.end(), {"env", "-"});
    RunResult env = run(env_argv, verbose);
    EXPECT_EQ(env.exit_code, 0);
    EXPECT_EQ(env.out.find("SAMPLER_"), std::string::npos) << env.out;
  }
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) left.push_back(entry.path().filename());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"id", "victim"}));
}

// ------------------------------------------------------------------------------------------------ crashes

struct CrashCase {
  const char* kind;
  int signal;
  const char* name;
  const char* function;   ///< frame 0, or the first frame in the program when frame0_in_program is false
  bool frame0_in_program;
  bool fault_address;
  bool truncated;
};

const CrashCase kCrashes[] = {
    {"segv", SIGSEGV, "SIGSEGV", "crash_segv", true, true, false},
    {"bus", SIGBUS, "SIGBUS", "crash_bus", true, true, false},
    {"fpe", SIGFPE, "SIGFPE", "crash_fpe", true, true, false},
    {"ill", SIGILL, "SIGILL", "crash_ill", true, true, false},
    {"abrt", SIGABRT, "SIGABRT", "crash_abrt", false, false, false},
    {"trap", SIGTRAP, "SIGTRAP", "crash_trap", true, false, false},
    {"term", SIGTERM, "SIGTERM", "crash_term", true, false, false},
    {"int", SIGINT, "SIGINT", "crash_int", true, false, false},
    {"overflow", SIGSEGV, "SIGSEGV", "crash_overflow", true, true, true},
    {"thread", SIGSEGV, "SIGSEGV", "crash_in_thread", true, true, false},
};

void PrintTo(const CrashCase& c, std::ostream* out) { *out << c.kind; }

struct SymbolizedFrame {
  int number;
  std::string function;
  bool in_program;
};

/// Renders the report's main-backtrace through the formats library (what resolve-backtrace does), then
/// llvm-symbolizer --filter-markup with a build-ID directory holding the example binary.
std::vector<SymbolizedFrame> symbolize(const std::string& report_text, const std::string& binary,
                                       const std::string& build_id, std::string& transcript) {
  std::string dir = make_temp_dir();
  std::filesystem::path debug = std::filesystem::path(dir) / ".build-id" / build_id.substr(0, 2);
  std::filesystem::create_directories(debug);
  std::filesystem::copy_file(binary, debug / (build_id.substr(2) + ".debug"));
  std::string markup;
  DiagnosticList diagnostics;
  LineReader reader(std::string_view(report_text), "report", diagnostics);
  EXPECT_TRUE(render_backtraces(reader, [&](std::string_view text) { markup.append(text); }, diagnostics));
  EXPECT_EQ(diagnostics.items.size(), 0u);
  RunOptions options;
  options.input = markup;
  RunResult r = run({kSymbolizer, "--filter-markup", "--debug-file-directory=" + dir}, options);
  transcript = markup + "\n---\n" + r.out;
  // Frame lines: "    #N    0xADDRESS FUNCTION FILE:LINE:COLUMN (MODULE+0xOFFSET)".
  std::vector<SymbolizedFrame> frames;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string number, address, function, rest;
    if (!(words >> number >> address >> function) || number.size() < 2 || number[0] != '#') continue;
    if (!is_hex_address(address)) continue;
    std::getline(words, rest);
    frames.push_back({std::stoi(number.substr(1)), function, rest.find("sampler-example") != std::string::npos});
  }
  return frames;
}

class Crash : public ::testing::TestWithParam<CrashCase> {};

TEST_P(Crash, ReportsSamplesAndTheStackThenDiesOfTheSameSignal) {
  const CrashCase& c = GetParam();
  RunResult plain = run({kUninstrumented, "crash", c.kind});
  EXPECT_EQ(plain.signal, c.signal);

  RunResult r;
  std::string text = report_of({kExample, "crash", c.kind}, "1", "", &r);
  EXPECT_EQ(r.signal, plain.signal) << "the exit status must be the uninstrumented one";
  ParsedReport report = parse_report(text);
  expect_well_formed(report, {"samples", "main-backtrace"});
  // The samples are all there: the workload ran 1000 times before the crash.
  EXPECT_EQ(samples(report, kExampleUnit, "function-entries"), (Rows{{1000}, {0}}));

  ASSERT_EQ(report.bodies.size(), 2u);
  const std::vector<std::string>& body = report.bodies[1];
  ASSERT_GE(body.size(), 4u);
  EXPECT_EQ(body.front(), "{{{reset}}}");
  std::string prefix = "signal:" + std::to_string(c.signal) + ":" + c.name;
  std::string signal_line = body[body.size() - 2];
  if (c.fault_address) {
    ASSERT_EQ(signal_line.rfind(prefix + ":", 0), 0u) << signal_line;
    EXPECT_TRUE(is_hex_address(signal_line.substr(prefix.size() + 1), true)) << signal_line;
  } else {
    EXPECT_EQ(signal_line, prefix);
  }
  ASSERT_EQ(body.back().rfind("cbf:", 0), 0u);
  cbf::DecodedStack stack = cbf::decode_stack_base64(std::string_view(body.back()).substr(4));
  ASSERT_TRUE(stack.ok()) << stack.error->message;
  EXPECT_EQ(stack.truncated(), c.truncated);
  ASSERT_FALSE(stack.items.empty());
  EXPECT_EQ(stack.items[0].frame.kind, cbf::FrameKind::kPc);
  for (size_t i = 1; i < stack.items.size(); ++i) {
    if (stack.items[i].type == cbf::ItemType::kFrame) {
      EXPECT_EQ(stack.items[i].frame.kind, cbf::FrameKind::kRa);
    }
  }

  std::string build_id;
  for (const std::string& line : body) {
    std::vector<std::string> fields = markup_fields(line);  // module, ID, NAME, elf, BUILDID
    if (fields.size() == 5 && fields[0] == "module" && fields[3] == "elf" &&
        std::filesystem::path(fields[2]).filename() == "sampler-example") {
      build_id = fields[4];
    }
  }
  ASSERT_FALSE(build_id.empty()) << "no module element for the example";
  std::string transcript;
  std::vector<SymbolizedFrame> frames = symbolize(text, kExample, build_id, transcript);
  ASSERT_FALSE(frames.empty()) << transcript;
  if (c.frame0_in_program) {
    EXPECT_EQ(frames[0].number, 0) << transcript;
    EXPECT_EQ(frames[0].function, c.function) << transcript;
  } else {
    // Frame 0 is in libc, whose debug information is not in the directory: llvm-symbolizer leaves it out, and
    // the first frame it names is the program's function that called abort().
    EXPECT_GT(frames[0].number, 0) << transcript;
    EXPECT_EQ(frames[0].function, c.function) << transcript;
    bool in_libc = false;
    std::map<std::string, std::string> module_names;
    for (const std::string& line : body) {
      std::vector<std::string> fields = markup_fields(line);  // mmap, START, SIZE, load, MODULE, FLAGS, VADDR
      if (fields.size() == 5 && fields[0] == "module") module_names[fields[1]] = fields[2];
      if (fields.size() == 7 && fields[0] == "mmap") {
        uint64_t start = std::stoull(fields[1], nullptr, 16), size = std::stoull(fields[2], nullptr, 16);
        uint64_t pc = stack.items[0].frame.address;
        if (pc >= start && pc < start + size) in_libc = module_names[fields[4]].find("libc.so") != std::string::npos;
      }
    }
    EXPECT_TRUE(in_libc) << "frame 0 of abort() lies in libc";
  }
  // The call chain under the crash is there too (except on the second thread, which has its own).
  bool chain_expected = std::string(c.kind) != "thread" && std::string(c.kind) != "overflow";
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer defers asynchronous signals and delivers them from its own frames, with a context of its own.
  if (c.signal == SIGTERM || c.signal == SIGINT) chain_expected = false;
#endif
  if (chain_expected) {
    bool found_main = false;
    for (const SymbolizedFrame& f : frames) found_main = found_main || f.function == "main";
    EXPECT_TRUE(found_main) << transcript;
  }
}

INSTANTIATE_TEST_SUITE_P(EverySignal, Crash, ::testing::ValuesIn(kCrashes),
                         [](const ::testing::TestParamInfo<CrashCase>& param) { return std::string(param.param.kind); });

TEST(CrashInReport, AFaultWhileReportingEndsWithTheOriginalSignal) {
  // The unit's tables are damaged: writing them faults inside the crash handler. The process must still die of
  // its own SIGSEGV, promptly (a hang would hit the test's timeout), and leave a report the library can read.
  RunResult plain = run({kUninstrumented, "crash-in-report", "100"});
  RunResult r;
  std::string text = report_of({kExample, "crash-in-report", "100"}, "1", "", &r);
  EXPECT_EQ(plain.signal, SIGSEGV);
  EXPECT_EQ(r.signal, SIGSEGV);
  ParsedReport report = parse_report(text);
  // What the handler wrote before its own fault: the start of the samples subreport, cut short. The reader warns
  // of it (docs/formats.md section 3 allows a last subreport cut short by a crash), and only warns.
  EXPECT_EQ(text.rfind("<report id=\"samples\">\n", 0), 0u) << text;
  ASSERT_FALSE(report.diagnostics.empty()) << "a report cut short must be diagnosed: " << text;
  for (const std::string& d : report.diagnostics) EXPECT_NE(d.find("warning"), std::string::npos) << d;
}

TEST(CrashWithoutReport, SignalsAreUntouchedWithoutADestination) {
  RunOptions options;
  options.env["SAMPLER_SPARSITY"] = "1";
  RunResult r = run({kExample, "crash", "segv"}, options);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace sampler::testing
