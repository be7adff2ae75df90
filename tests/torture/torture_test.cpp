// The crash-path torture suite: libsampler at its worst moments. Each test runs the torture programs
// (torture.c, torture-host + torture_plugin.c) in one hard situation and checks three things:
//  - the report is well formed: the formats library reads it without an error (a report cut short by a full disk
//    only gets the warning docs/formats.md section 3 allows) and the tools resolve it (resolveSamples joins every
//    section with the sites of the binaries; resolve-backtrace and llvm-symbolizer name the faulting function);
//  - nothing counted is lost: at SAMPLER_SPARSITY=1 every counter has its exact value, once;
//  - the exit status is the uninstrumented one: the same source built with SAMPLER_UNINSTRUMENTED, run the same
//    way, ends the same way.
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sections/diagnostics.h"
#include "sections/line_reader.h"
#include "sections/report.h"

extern char** environ;

namespace sampler {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kUnitA = "70c70e00000000000000000000000001";  // torture.c
const std::string kUnitB = "70c70e00000000000000000000000002";  // torture_more.c
const std::string kUnitPlugin = "70c70e00000000000000000000000003";

// ------------------------------------------------------------------------------------------- running programs

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// A fresh directory for one test, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "sampler-torture-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
    for (const auto& entry : fs::recursive_directory_iterator(path_, ignored)) {
      if (entry.is_directory(ignored)) {
        fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add, ignored);
      }
    }
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

struct Launch {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  ///< on top of the test's environment without any SAMPLER_* variable
  std::optional<int> fd3;                  ///< this descriptor becomes the child's descriptor 3
  std::string input;                       ///< the child's standard input
  std::optional<int> fd2;                  ///< this descriptor becomes the child's standard error
};

/// A running child whose standard output and error go to files of the test's directory.
class Child {
 public:
  Child(const Launch& launch, const TempDir& dir) : out_path_(dir / "stdout"), err_path_(dir / "stderr") {
    static int sequence = 0;
    ++sequence;
    out_path_ += std::to_string(sequence);
    err_path_ += std::to_string(sequence);
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::string(*e).rfind("SAMPLER_", 0) != 0) env.push_back(*e);
    }
    for (const auto& [name, value] : launch.env) env.push_back(name + "=" + value);
    std::vector<char*> env_pointers, arg_pointers;
    for (std::string& e : env) env_pointers.push_back(e.data());
    env_pointers.push_back(nullptr);
    std::vector<std::string> args = launch.argv;
    for (std::string& a : args) arg_pointers.push_back(a.data());
    arg_pointers.push_back(nullptr);
    const std::string input_path = dir / ("stdin" + std::to_string(sequence));
    write_file(input_path, launch.input);

    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      struct rlimit no_core {0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      // Standard streams first, then descriptor 3: open() may hand out 3 itself when it is free (as it is
      // outside ctest), and closing it before the dup2s would leave the program reading the parent's stdin.
      int in = open(input_path.c_str(), O_RDONLY);
      int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(in, 0);
      dup2(out, 1);
      dup2(err, 2);
      for (int fd : {in, out, err}) {
        if (fd > 2) close(fd);
      }
      if (launch.fd2) dup2(*launch.fd2, 2);
      if (launch.fd3) {
        if (*launch.fd3 != 3) {
          dup2(*launch.fd3, 3);
          close(*launch.fd3);
        }
        fcntl(3, F_SETFD, 0);
      } else {
        close(3);
      }
      execve(arg_pointers[0], arg_pointers.data(), env_pointers.data());
      _exit(127);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (!waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }
  std::string out() const { return read_file(out_path_); }
  std::string err() const { return read_file(err_path_); }

  /// Waits (at most `limit`) until the child's standard output contains `text`.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds limit = 20s) const {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (out().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }

  /// Waits (at most `limit`) until the child has printed a line starting with `prefix`; returns the rest of it.
  std::optional<std::string> wait_for_line(const std::string& prefix, std::chrono::milliseconds limit = 20s) const {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      std::istringstream lines(out());
      std::string line;
      while (std::getline(lines, line)) {
        if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
      }
      std::this_thread::sleep_for(5ms);
    }
    return std::nullopt;
  }

  /// Waits for the child; the status as the shell shows it: the exit code, or 128 + the signal.
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }

 private:
  pid_t pid_ = -1;
  bool waited_ = false;
  std::string out_path_, err_path_;
};

struct Outcome {
  int status = -1;  ///< exit code, or 128 + signal
  std::string out, err;
};

Outcome run(const Launch& launch, const TempDir& dir) {
  Child child(launch, dir);
  Outcome outcome;
  outcome.status = child.wait();
  outcome.out = child.out();
  outcome.err = child.err();
  return outcome;
}

/// The tools read their input from a file (they may stop reading early; a pipe would need a writer thread).
Outcome run_tool(std::vector<std::string> argv, const std::string& input, const TempDir& dir) {
  Launch launch;
  launch.argv = std::move(argv);
  launch.input = input;
  return run(launch, dir);
}

/// Polls `condition` until it holds (true) or `limit` has passed (false): the tests wait on events, never for a
/// guessed time.
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit = 20s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(1ms);
  }
}

/// The system call thread `tid` of process `pid` is in (/proc/PID/task/TID/syscall), or -1 when it runs in user
/// space or cannot be read.
long current_syscall(pid_t pid, pid_t tid) {
  std::istringstream text(read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall"));
  long number = -1;
  return text >> number ? number : -1;
}

/// True if `signal` is pending for process `pid` (its thread or the whole process: SigPnd or ShdPnd).
bool signal_pending(pid_t pid, int signal) {
  std::istringstream lines(read_file("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("SigPnd:", 0) != 0 && line.rfind("ShdPnd:", 0) != 0) continue;
    const uint64_t mask = std::strtoull(line.c_str() + 7, nullptr, 16);
    if (mask & (uint64_t{1} << (signal - 1))) return true;
  }
  return false;
}

/// Bytes waiting in the pipe whose read end is `fd`.
int queued_bytes(int fd) {
  int queued = 0;
  ioctl(fd, FIONREAD, &queued);
  return queued;
}

/// Reads `fd` to its end (every writer gone).
std::string read_to_end(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  return text;
}

std::map<std::string, std::string> sampling_env() { return {{"SAMPLER_SPARSITY", "1"}, {"SAMPLER_SEED", "1"}}; }

// --------------------------------------------------------------------------------------------- reading reports

struct Section {
  std::string kind, unit, scheme;
  std::vector<std::vector<uint64_t>> rows;
  bool complete = true;
};

struct Report {
  std::vector<std::string> ids;      ///< subreports in order
  std::vector<bool> complete;        ///< each subreport ended with </report>
  std::vector<std::string> backtrace;  ///< body lines of main-backtrace subreports
  std::vector<Section> sections;
  std::vector<std::string> errors, warnings;
};

class ReportCollector : public ReportVisitor {
 public:
  explicit ReportCollector(Report& report) : report_(report) {}
  void begin_subreport(std::string_view id, uint64_t) override {
    report_.ids.emplace_back(id);
    report_.complete.push_back(false);
    in_backtrace_ = id == "main-backtrace";
  }
  void body_line(std::string_view line, uint64_t) override {
    if (in_backtrace_) report_.backtrace.emplace_back(line);
  }
  void end_subreport(bool complete) override {
    report_.complete.back() = complete;
    in_backtrace_ = false;
  }

 private:
  Report& report_;
  bool in_backtrace_ = false;
};

class SectionCollector : public SamplesVisitor {
 public:
  explicit SectionCollector(Report& report) : report_(report) {}
  void begin_section(const SampleSectionHeader& h) override {
    Section s;
    s.kind = h.kind == SampleSectionKind::kSamples ? "samples" : "timestamps";
    s.unit = h.unit;
    s.scheme = h.scheme;
    report_.sections.push_back(s);
  }
  void section_line(std::string_view line, uint64_t) override {
    std::vector<uint64_t> row;
    std::stringstream fields{std::string(line)};
    std::string field;
    while (std::getline(fields, field, '\t')) row.push_back(std::strtoull(field.c_str(), nullptr, 10));
    report_.sections.back().rows.push_back(row);
  }
  void end_section(bool complete) override { report_.sections.back().complete = complete; }

 private:
  Report& report_;
};

Report parse_report(const std::string& text) {
  Report report;
  DiagnosticList diagnostics;
  {
    LineReader input(text, "report", diagnostics);
    ReportCollector visitor(report);
    read_report(input, visitor);
  }
  {
    LineReader input(text, "report", diagnostics);
    SectionCollector visitor(report);
    read_samples(input, visitor);
  }
  for (const Diagnostic& d : diagnostics.items) {
    (d.severity == Severity::kError ? report.errors : report.warnings).push_back(format_diagnostic("", d));
  }
  return report;
}

/// Every samples section of (unit, scheme); "nothing counted is lost" also means never counted twice.
std::vector<const Section*> sections_of(const Report& report, const std::string& unit, const std::string& scheme) {
  std::vector<const Section*> found;
  for (const Section& s : report.sections) {
    if (s.kind == "samples" && s.unit == unit && s.scheme == scheme) found.push_back(&s);
  }
  return found;
}

using Rows = std::vector<std::vector<uint64_t>>;

/// What torture.c's unit counts after `work n` at sparsity 1 (threads: `threads T W N`).
std::map<std::string, Rows> expected_unit_a(uint64_t n, uint64_t threads = 0, uint64_t waves = 0, uint64_t per = 0) {
  std::vector<uint64_t> per_thread(64, 0);
  for (uint64_t t = 0; t < threads; ++t) per_thread[t] = per;
  return {{"coverage", {{n}, {threads * per}, {waves * per}}},
          {"branches", {{n / 2, n - n / 2}}},  // false, true: i % 2 == 0 holds for ceil(n / 2) of 0..n-1
          {"per-thread", {per_thread}}};
}

/// What torture_more.c's unit counts after `n` iterations.
std::map<std::string, Rows> expected_unit_b(uint64_t n) {
  std::vector<uint64_t> row(256);
  for (uint64_t column = 0; column < 256; ++column) row[column] = n / 256 + (column < n % 256 ? 1 : 0);
  return {{"wide", Rows(8, row)}, {"coverage", {{n}}}};
}

/// Checks that every scheme of `expected` appears exactly once for `unit`, complete, with exactly those counts.
void expect_counts(const Report& report, const std::string& unit, const std::map<std::string, Rows>& expected) {
  for (const auto& [scheme, rows] : expected) {
    const auto found = sections_of(report, unit, scheme);
    ASSERT_EQ(found.size(), 1u) << "samples sections of unit " << unit << " scheme " << scheme;
    EXPECT_TRUE(found[0]->complete) << unit << " " << scheme;
    EXPECT_EQ(found[0]->rows, rows) << unit << " " << scheme;
  }
}

/// The report is read without an error (warnings allowed only when `cut_short_allowed`).
void expect_well_formed(const Report& report, bool cut_short_allowed = false) {
  EXPECT_TRUE(report.errors.empty()) << ::testing::PrintToString(report.errors);
  if (!cut_short_allowed) {
    EXPECT_TRUE(report.warnings.empty()) << ::testing::PrintToString(report.warnings);
  }
}

// ------------------------------------------------------------------------------------------------ the tools

/// resolveSamples joins every section with the sites in `binaries`: exit 0, one line per site.
void expect_resolves(const std::string& report, const std::vector<std::string>& binaries, size_t sites,
                     const TempDir& dir) {
  std::vector<std::string> argv{SAMPLER_RESOLVE_SAMPLES};
  argv.insert(argv.end(), binaries.begin(), binaries.end());
  const Outcome resolved = run_tool(argv, report, dir);
  EXPECT_EQ(resolved.status, 0) << resolved.err;
  EXPECT_EQ(resolved.err, "");
  size_t lines = 0;
  for (char c : resolved.out) lines += c == '\n';
  EXPECT_EQ(lines, sites) << resolved.out;
}

/// resolve-backtrace turns the main-backtrace into markup, and llvm-symbolizer (given the binaries by build ID)
/// names `function` in it.
void expect_symbolized(const std::string& report, const std::vector<std::string>& binaries,
                       const std::string& function, const TempDir& dir) {
  const Outcome markup = run_tool({SAMPLER_RESOLVE_BACKTRACE}, report, dir);
  ASSERT_EQ(markup.status, 0) << markup.err;
  EXPECT_NE(markup.out.find("{{{bt:0:0x"), std::string::npos) << markup.out;
  EXPECT_NE(markup.out.find("Crashed with signal 11 (SIGSEGV)"), std::string::npos) << markup.out;
  // A .build-id directory for llvm-symbolizer: each module line names its build ID.
  const fs::path ids = dir.path() / "debug";
  std::istringstream lines(markup.out);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t module = line.find("{{{module:");
    if (module == std::string::npos) continue;
    const size_t elf = line.find(":elf:", module);
    const size_t end = line.find("}}}", elf);
    const std::string build_id = line.substr(elf + 5, end - elf - 5);
    for (const std::string& binary : binaries) {
      if (line.find(fs::path(binary).filename().string() + ":elf:") == std::string::npos) continue;
      const fs::path link = ids / ".build-id" / build_id.substr(0, 2) / (build_id.substr(2) + ".debug");
      fs::create_directories(link.parent_path());
      std::error_code ignored;
      fs::create_symlink(binary, link, ignored);
    }
  }
  const Outcome symbolized = run_tool({SAMPLER_LLVM_SYMBOLIZER, "--filter-markup",
                                       "--debug-file-directory=" + ids.string()},
                                      markup.out, dir);
  EXPECT_EQ(symbolized.status, 0) << symbolized.err;
  EXPECT_NE(symbolized.out.find(function), std::string::npos) << symbolized.out;
}

const std::vector<std::string> kTortureBinary{SAMPLER_TORTURE};
constexpr size_t kTortureSites = 5 + 9;  // torture.c + torture_more.c
constexpr long kN = 1000;

// ===================================================================================================== the tests

// A crash during the exit-time report: the report goes to a pipe of one page that the test does not read, so the
// runtime's exit-time writer blocks in the middle of the first unit; then SIGTERM arrives. The report must come
// out whole (the samples as at exit, then the main-backtrace of SIGTERM), not with a line cut where the write was
// interrupted.
TEST(Torture, SigtermDuringTheExitTimeReport) {
  TempDir dir;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_GE(fcntl(fds[1], F_SETPIPE_SZ, 4096), 4096);
  Launch launch{{SAMPLER_TORTURE, "exit-wait", std::to_string(kN)}, sampling_env(), fds[1], ""};
  launch.env["SAMPLER_REPORT_FD"] = "3";
  Child child(launch, dir);
  close(fds[1]);
  ASSERT_TRUE(child.wait_for_output("exiting\n"));
  // The pipe fills up and the writer (the main thread) is blocked in write().
  ASSERT_TRUE(wait_until([&] {
    return queued_bytes(fds[0]) == 4096 && current_syscall(child.pid(), child.pid()) == SYS_write;
  })) << "the report never filled the pipe";
  kill(child.pid(), SIGTERM);
  // The signal has arrived (no longer pending) while the writer is still blocked: nothing can move until the pipe
  // is read.
  ASSERT_TRUE(wait_until([&] {
    return !signal_pending(child.pid(), SIGTERM) && current_syscall(child.pid(), child.pid()) == SYS_write;
  })) << "SIGTERM was never delivered";
  const std::string text = read_to_end(fds[0]);
  close(fds[0]);
  EXPECT_EQ(child.wait(), 128 + SIGTERM);  // what SIGTERM does to the uninstrumented program
  EXPECT_EQ(child.err(), "");

  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples", "main-backtrace"})) << text;
  EXPECT_EQ(report.complete, (std::vector<bool>{true, true}));
  expect_counts(report, kUnitA, expected_unit_a(kN));
  expect_counts(report, kUnitB, expected_unit_b(kN));
  EXPECT_NE(std::find(report.backtrace.begin(), report.backtrace.end(), "signal:15:SIGTERM"), report.backtrace.end());
  expect_resolves(text, kTortureBinary, kTortureSites, dir);
}

// Two threads fault at the same moment: one report, one backtrace, the process dies of SIGSEGV.
TEST(Torture, TwoThreadsCrashAtOnce) {
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    TempDir dir;
    Launch launch{{SAMPLER_TORTURE, "two-threads", std::to_string(kN)}, sampling_env(), std::nullopt, ""};
    launch.env["SAMPLER_FILE"] = dir / "report";
    const Outcome outcome = run(launch, dir);
    Launch plain = launch;
    plain.argv[0] = SAMPLER_TORTURE_UNINSTRUMENTED;
    EXPECT_EQ(outcome.status, run(plain, dir).status);
    EXPECT_EQ(outcome.status, 128 + SIGSEGV);
    EXPECT_EQ(outcome.err, "");
    const std::string text = read_file(dir / "report");
    const Report report = parse_report(text);
    expect_well_formed(report);
    ASSERT_EQ(report.ids, (std::vector<std::string>{"samples", "main-backtrace"})) << text;
    EXPECT_EQ(report.complete, (std::vector<bool>{true, true}));
    expect_counts(report, kUnitA, expected_unit_a(kN));
    expect_counts(report, kUnitB, expected_unit_b(kN));
    expect_resolves(text, kTortureBinary, kTortureSites, dir);
    expect_symbolized(text, kTortureBinary, "torture_fault", dir);
  }
}

// The program's own SIGSEGV handler, installed after the runtime's, passes the signal on: both run, the runtime
// writes its report, the program dies of SIGSEGV as it would have.
TEST(Torture, ProgramHandlerInstalledAfterTheRuntimesChains) {
  TempDir dir;
  Launch launch{{SAMPLER_TORTURE, "handler-after", std::to_string(kN), "chain"}, sampling_env(), std::nullopt, ""};
  launch.env["SAMPLER_FILE"] = dir / "report";
  const Outcome outcome = run(launch, dir);
  Launch plain = launch;
  plain.argv[0] = SAMPLER_TORTURE_UNINSTRUMENTED;
  const Outcome baseline = run(plain, dir);
  EXPECT_EQ(outcome.status, baseline.status);
  EXPECT_EQ(outcome.status, 128 + SIGSEGV);
  EXPECT_EQ(outcome.err, "torture: program handler\n");
  EXPECT_EQ(outcome.err, baseline.err);
  const std::string text = read_file(dir / "report");
  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples", "main-backtrace"})) << text;
  expect_counts(report, kUnitA, expected_unit_a(kN));
  expect_counts(report, kUnitB, expected_unit_b(kN));
  expect_resolves(text, kTortureBinary, kTortureSites, dir);
  expect_symbolized(text, kTortureBinary, "torture_fault", dir);
}

// A handler installed after the runtime's that ends the program itself: the runtime's handler was replaced and
// does not run (as the program asked); the exit status is the program's, and the report holds nothing half-done.
TEST(Torture, ProgramHandlerInstalledAfterTheRuntimesDecides) {
  TempDir dir;
  Launch launch{{SAMPLER_TORTURE, "handler-after", std::to_string(kN), "own"}, sampling_env(), std::nullopt, ""};
  launch.env["SAMPLER_FILE"] = dir / "report";
  const Outcome outcome = run(launch, dir);
  Launch plain = launch;
  plain.argv[0] = SAMPLER_TORTURE_UNINSTRUMENTED;
  EXPECT_EQ(outcome.status, run(plain, dir).status);
  EXPECT_EQ(outcome.status, 42);
  EXPECT_EQ(outcome.err, "torture: program handler\n");
  // _exit() runs no exit handler: nothing was written.
  EXPECT_EQ(read_file(dir / "report"), "");
}

// The torture host in MODE with the instrumented plugin (its report in DIR/report), then with the same plugin built
// without instrumentation: the baseline whose exit status and messages the instrumented run must keep.
struct HostRuns {
  Outcome instrumented;
  Outcome baseline;
};
HostRuns run_host_and_baseline(const char* mode, const TempDir& dir) {
  Launch launch{{SAMPLER_TORTURE_HOST, SAMPLER_TORTURE_PLUGIN, std::to_string(kN), mode}, sampling_env(),
                std::nullopt, ""};
  launch.env["SAMPLER_FILE"] = dir / "report";
  HostRuns runs{run(launch, dir), {}};
  launch.argv[1] = SAMPLER_TORTURE_PLUGIN_UNINSTRUMENTED;
  runs.baseline = run(launch, dir);
  return runs;
}

// The program's handlers come first (it dlopen()s the instrumented plugin afterwards): on SIGSEGV the runtime
// writes its report, then the program's handler runs and decides the exit status.
TEST(Torture, ProgramHandlerInstalledBeforeTheRuntimesStillRuns) {
  TempDir dir;
  const auto [outcome, baseline] = run_host_and_baseline("segv", dir);
  EXPECT_EQ(outcome.status, baseline.status);
  EXPECT_EQ(outcome.status, 41);
  EXPECT_EQ(outcome.err, "torture-host: program handler: SIGSEGV\n");
  EXPECT_EQ(outcome.err, baseline.err);
  const std::string text = read_file(dir / "report");
  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples", "main-backtrace"})) << text;
  expect_counts(report, kUnitPlugin, {{"coverage", {{static_cast<uint64_t>(kN)}}}});
  expect_resolves(text, {SAMPLER_TORTURE_PLUGIN}, 1, dir);
  expect_symbolized(text, {SAMPLER_TORTURE_HOST, SAMPLER_TORTURE_PLUGIN}, "torture_fault", dir);
}

// SIGTERM with a program handler installed before the runtime's: the program decides (a clean shutdown), so the
// runtime writes no crash report; the report is the ordinary one written at exit.
TEST(Torture, ProgramSigtermHandlerInstalledBeforeTheRuntimesDecides) {
  TempDir dir;
  const auto [outcome, baseline] = run_host_and_baseline("term", dir);
  EXPECT_EQ(outcome.status, baseline.status);
  EXPECT_EQ(outcome.status, 43);
  EXPECT_EQ(outcome.err, "torture-host: program handler: SIGTERM\n");
  const std::string text = read_file(dir / "report");
  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples"})) << text;
  expect_counts(report, kUnitPlugin, {{"coverage", {{static_cast<uint64_t>(kN)}}}});
  expect_resolves(text, {SAMPLER_TORTURE_PLUGIN}, 1, dir);
}

// SAMPLER_REPORT_FD names a descriptor that is not open: one line on stderr, no report, the program unharmed,
// at exit and when it crashes.
TEST(Torture, ReportDescriptorClosedAtStart) {
  TempDir dir;
  for (const char* mode : {"work", "two-threads"}) {
    SCOPED_TRACE(mode);
    Launch launch{{SAMPLER_TORTURE, mode, std::to_string(kN)}, sampling_env(), std::nullopt, ""};
    launch.env["SAMPLER_REPORT_FD"] = "9";
    const Outcome outcome = run(launch, dir);
    Launch plain = launch;
    plain.argv[0] = SAMPLER_TORTURE_UNINSTRUMENTED;
    EXPECT_EQ(outcome.status, run(plain, dir).status);
    EXPECT_EQ(outcome.err, "sampler: SAMPLER_REPORT_FD: descriptor 9 is not open for writing; no report\n");
  }
}

// The program closes the report's descriptor and opens a file of its own that gets the same number: the runtime
// must not write its report into the program's file.
TEST(Torture, ReportDescriptorTakenOverByTheProgram) {
  TempDir dir;
  const int report_fd = open((dir / "report").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(report_fd, 0);
  Launch launch{{SAMPLER_TORTURE, "reuse-fd", std::to_string(kN), dir / "data"}, sampling_env(), report_fd, ""};
  launch.env["SAMPLER_REPORT_FD"] = "3";
  const Outcome outcome = run(launch, dir);
  close(report_fd);
  EXPECT_EQ(outcome.status, 0);
  EXPECT_EQ(read_file(dir / "data"), "the program's own data\n");
  // The report, if any part of it was written, is still well formed.
  const Report report = parse_report(read_file(dir / "report"));
  EXPECT_TRUE(report.errors.empty()) << ::testing::PrintToString(report.errors);
}

// Writes fail: a pipe whose reader has gone (EPIPE; SIGPIPE must not kill the program) and /dev/full (ENOSPC).
TEST(Torture, ReportDestinationFails) {
  TempDir dir;
  for (const char* mode : {"work", "two-threads"}) {
    SCOPED_TRACE(mode);
    Launch plain{{SAMPLER_TORTURE_UNINSTRUMENTED, mode, std::to_string(kN)}, {}, std::nullopt, ""};
    const int baseline = run(plain, dir).status;

    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    close(fds[0]);  // the reader exits before anything is written
    Launch to_pipe{{SAMPLER_TORTURE, mode, std::to_string(kN)}, sampling_env(), fds[1], ""};
    to_pipe.env["SAMPLER_REPORT_FD"] = "3";
    const Outcome piped = run(to_pipe, dir);
    close(fds[1]);
    EXPECT_EQ(piped.status, baseline) << "pipe without reader";
    EXPECT_EQ(piped.err, "");

    Launch to_full{{SAMPLER_TORTURE, mode, std::to_string(kN)}, sampling_env(), std::nullopt, ""};
    to_full.env["SAMPLER_FILE"] = "/dev/full";
    const Outcome full = run(to_full, dir);
    EXPECT_EQ(full.status, baseline) << "/dev/full";
    EXPECT_EQ(full.err, "");
  }
}

// A full disk in the middle of the report: a tmpfs of two pages, one already used, in a mount namespace of the
// child's own (unshare). What was written before the disk filled up reads as a report cut short.
TEST(Torture, ReportOnAFullFilesystem) {
  TempDir dir;
  const std::string mount_point = dir / "small";
  fs::create_directory(mount_point);
  Launch probe{{"/bin/sh", "-c", "command -v unshare >/dev/null && unshare -rm mount -t tmpfs -o size=8k tmpfs \"$0\"",
                mount_point},
               {},
               std::nullopt,
               ""};
  if (run(probe, dir).status != 0) GTEST_SKIP() << "cannot mount a tmpfs in a user namespace here (unshare -rm)";
  for (const char* mode : {"work", "two-threads"}) {
    SCOPED_TRACE(mode);
    Launch plain{{SAMPLER_TORTURE_UNINSTRUMENTED, mode, std::to_string(kN)}, {}, std::nullopt, ""};
    const int baseline = run(plain, dir).status;
    // In the namespace: mount, fill one page, run, then copy the report out (the mount goes with the namespace).
    // The shell's own "Segmentation fault" notice is silenced; the program's stderr is passed on.
    const std::string script =
        "mount -t tmpfs -o size=8k tmpfs \"$1\" && head -c 4096 /dev/zero > \"$1/fill\" || exit 99; "
        "{ SAMPLER_FILE=\"$1/report\" \"$2\" \"$3\" \"$4\" 2>\"$1/stderr\"; } 2>/dev/null; status=$?; "
        "cat \"$1/stderr\" >&2; cp \"$1/report\" \"$5\"; exit $status";
    Launch launch{{"/usr/bin/unshare", "-rm", "/bin/sh", "-c", script, "sh", mount_point, SAMPLER_TORTURE, mode,
                   std::to_string(kN), dir / "report"},
                  sampling_env(),
                  std::nullopt,
                  ""};
    const Outcome outcome = run(launch, dir);
    EXPECT_EQ(outcome.status, baseline);
    EXPECT_EQ(outcome.err, "");
    const std::string text = read_file(dir / "report");
    EXPECT_EQ(text.size(), 4096u) << "the report should have filled the remaining page";
    // Cut short by the full disk: the reader warns (docs/formats.md section 3), never errs; every section that made it
    // out whole has its exact counts, the one cut short is marked so.
    const Report report = parse_report(text);
    EXPECT_TRUE(report.errors.empty()) << ::testing::PrintToString(report.errors);
    ASSERT_EQ(report.ids, std::vector<std::string>{"samples"});
    EXPECT_EQ(report.complete, std::vector<bool>{false});
    std::map<std::string, std::map<std::string, Rows>> expected{{kUnitA, expected_unit_a(kN)},
                                                                {kUnitB, expected_unit_b(kN)}};
    size_t cut = 0;
    for (const Section& section : report.sections) {
      const Rows& rows = expected[section.unit][section.scheme];
      if (section.complete) {
        EXPECT_EQ(section.rows, rows) << section.unit << " " << section.scheme;
        continue;
      }
      // Cut short: every line before the last (which the cut may have split) is exact.
      ++cut;
      ASSERT_LE(section.rows.size(), rows.size());
      for (size_t i = 0; i + 1 < section.rows.size(); ++i) EXPECT_EQ(section.rows[i], rows[i]) << "line " << i;
    }
    EXPECT_EQ(cut, 1u);
    // resolveSamples resolves the whole sections and the lines of the one cut short, with a warning.
    const Outcome resolved = run_tool({SAMPLER_RESOLVE_SAMPLES, SAMPLER_TORTURE}, text, dir);
    EXPECT_EQ(resolved.status, 0) << resolved.err;
  }
}

// SAMPLER_FILE in a directory that is not writable: one line on stderr, no report, the program unharmed.
TEST(Torture, ReportFileInANonWritableDirectory) {
  TempDir dir;
  const std::string locked = dir / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  // root writes anywhere: then the program runs as nobody (setpriv, util-linux), if nobody can run it.
  std::vector<std::string> prefix;
  if (geteuid() == 0) {
    if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "running as root without setpriv";
    prefix = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    fs::permissions(dir.path(), fs::perms::others_exec | fs::perms::group_exec, fs::perm_options::add);
    Launch probe{prefix, {}, std::nullopt, ""};
    probe.argv.insert(probe.argv.end(), {SAMPLER_TORTURE, "work", "1"});
    if (run(probe, dir).status != 0) GTEST_SKIP() << "running as root, and nobody cannot run the build's programs";
  }
  for (const char* mode : {"work", "two-threads"}) {
    SCOPED_TRACE(mode);
    Launch launch{prefix, sampling_env(), std::nullopt, ""};
    launch.argv.insert(launch.argv.end(), {SAMPLER_TORTURE, mode, std::to_string(kN)});
    launch.env["SAMPLER_FILE"] = locked + "/report";
    const Outcome outcome = run(launch, dir);
    Launch plain{prefix, {}, std::nullopt, ""};
    plain.argv.insert(plain.argv.end(), {SAMPLER_TORTURE_UNINSTRUMENTED, mode, std::to_string(kN)});
    EXPECT_EQ(outcome.status, run(plain, dir).status);
    EXPECT_EQ(outcome.err,
              "sampler: SAMPLER_FILE: cannot create '" + locked + "/report': Permission denied; no report\n");
    EXPECT_FALSE(fs::exists(locked + "/report"));
  }
}

// SIGKILL: no report (nothing is written before exit), and nothing else harmed: another instrumented process
// running beside it writes its whole report.
TEST(Torture, SigkillLeavesNoReportAndHarmsNothingElse) {
  TempDir dir;
  Launch killed{{SAMPLER_TORTURE, "sleep", std::to_string(kN)}, sampling_env(), std::nullopt, ""};
  killed.env["SAMPLER_FILE"] = dir / "killed-report";
  Launch beside{{SAMPLER_TORTURE, "exit-wait", std::to_string(kN)}, sampling_env(), std::nullopt, ""};
  beside.env["SAMPLER_FILE"] = dir / "beside-report";
  Child victim(killed, dir);
  ASSERT_TRUE(victim.wait_for_output("ready\n"));
  Child neighbour(beside, dir);
  kill(victim.pid(), SIGKILL);
  EXPECT_EQ(victim.wait(), 128 + SIGKILL);
  EXPECT_EQ(neighbour.wait(), 0);
  EXPECT_EQ(victim.err(), "");
  EXPECT_EQ(read_file(dir / "killed-report"), "");
  const std::string text = read_file(dir / "beside-report");
  const Report report = parse_report(text);
  expect_well_formed(report);
  expect_counts(report, kUnitA, expected_unit_a(kN));
  expect_counts(report, kUnitB, expected_unit_b(kN));
  expect_resolves(text, kTortureBinary, kTortureSites, dir);
}

// 64 threads started and ended while sampling (in waves of 8, and all at once), the main thread sampling too:
// at sparsity 1 no count is lost; at sparsity 100 every thread gets its share.
TEST(Torture, SixtyFourThreadsStartedAndEndedWhileSampling) {
  TempDir dir;
  constexpr uint64_t kPer = 2000;
  for (uint64_t wave : {8u, 64u}) {
    SCOPED_TRACE("waves of " + std::to_string(wave));
    Launch launch{{SAMPLER_TORTURE, "threads", "64", std::to_string(wave), std::to_string(kPer)}, sampling_env(),
                  std::nullopt, ""};
    launch.env["SAMPLER_FILE"] = dir / "report";
    const Outcome outcome = run(launch, dir);
    EXPECT_EQ(outcome.status, 0);
    EXPECT_EQ(outcome.err, "");
    const std::string text = read_file(dir / "report");
    const Report report = parse_report(text);
    expect_well_formed(report);
    expect_counts(report, kUnitA, expected_unit_a(0, 64, 64 / wave, kPer));
    expect_resolves(text, kTortureBinary, kTortureSites, dir);
  }
  // Sparsity 100: about one opportunity in 100 of each thread, none left out.
  Launch sparse{{SAMPLER_TORTURE, "threads", "64", "8", std::to_string(kPer)},
                {{"SAMPLER_SPARSITY", "100"}, {"SAMPLER_FILE", dir / "sparse"}},
                std::nullopt,
                ""};
  const Outcome outcome = run(sparse, dir);
  EXPECT_EQ(outcome.status, 0);
  const Report report = parse_report(read_file(dir / "sparse"));
  expect_well_formed(report);
  const auto per_thread = sections_of(report, kUnitA, "per-thread");
  ASSERT_EQ(per_thread.size(), 1u);
  ASSERT_EQ(per_thread[0]->rows.size(), 1u);
  uint64_t total = 0;
  for (uint64_t count : per_thread[0]->rows[0]) {
    EXPECT_GT(count, 0u);   // expected 20 each: P(0) = e^-20
    EXPECT_LT(count, 80u);  // 13 standard deviations above
    total += count;
  }
  EXPECT_GT(total, 64 * kPer / 100 / 2);
  EXPECT_LT(total, 64 * kPer / 100 * 2);
}


// ========================================================== runtime hardening (docs/reliability.md section 4)

// The program's own SIGTERM handler (installed before the runtime) handles a SIGTERM and the program goes on; later
// it faults. Passing SIGTERM to the program must not use up the one crash report: the SIGSEGV is reported.
TEST(Torture, HandledSigtermLeavesTheCrashReportForALaterFault) {
  TempDir dir;
  const auto [outcome, baseline] = run_host_and_baseline("term-segv", dir);
  EXPECT_EQ(outcome.status, baseline.status);
  EXPECT_EQ(outcome.status, 41);
  EXPECT_EQ(outcome.err, "torture-host: program handler: SIGTERM\ntorture-host: program handler: SIGSEGV\n");
  EXPECT_EQ(outcome.err, baseline.err);
  const std::string text = read_file(dir / "report");
  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples", "main-backtrace"})) << text;
  EXPECT_EQ(report.complete, (std::vector<bool>{true, true}));
  expect_counts(report, kUnitPlugin, {{"coverage", {{static_cast<uint64_t>(kN)}}}});
  expect_symbolized(text, {SAMPLER_TORTURE_HOST, SAMPLER_TORTURE_PLUGIN}, "torture_fault", dir);
}

// SAMPLER_REPORT_FD=1 or 2: the report shares the program's own stream. The runtime writes a duplicate and never
// changes or closes the program's descriptor: a system() child still has it, and the program's last printf(),
// flushed by exit after the runtime's destructor, still comes out.
TEST(Torture, ReportOnTheProgramsStandardStreams) {
  TempDir dir;
  Launch plain{{SAMPLER_TORTURE_UNINSTRUMENTED, "stdout", std::to_string(kN)}, {}, std::nullopt, ""};
  const Outcome baseline = run(plain, dir);
  ASSERT_EQ(baseline.status, 0);
  ASSERT_EQ(baseline.out, "child out\nlast line\n");
  ASSERT_EQ(baseline.err, "child err\n");
  for (int fd : {1, 2}) {
    SCOPED_TRACE("SAMPLER_REPORT_FD=" + std::to_string(fd));
    Launch launch{{SAMPLER_TORTURE, "stdout", std::to_string(kN)}, sampling_env(), std::nullopt, ""};
    launch.env["SAMPLER_REPORT_FD"] = std::to_string(fd);
    const Outcome outcome = run(launch, dir);
    EXPECT_EQ(outcome.status, 0);
    const std::string& stream = fd == 1 ? outcome.out : outcome.err;
    EXPECT_EQ(fd == 1 ? outcome.err : outcome.out, fd == 1 ? baseline.err : baseline.out);
    // The program's own text around the report (the child's line before it, stdio's buffer after it).
    const std::string before = fd == 1 ? "child out\n" : "child err\n";
    const std::string after = fd == 1 ? "last line\n" : "";
    ASSERT_EQ(stream.rfind(before, 0), 0u) << stream;
    ASSERT_GE(stream.size(), before.size() + after.size()) << stream;
    EXPECT_EQ(stream.substr(stream.size() - after.size()), after) << stream;
    const std::string text = stream.substr(before.size(), stream.size() - before.size() - after.size());
    const Report report = parse_report(text);
    expect_well_formed(report);
    ASSERT_EQ(report.ids, (std::vector<std::string>{"samples"})) << stream;
    expect_counts(report, kUnitA, expected_unit_a(kN));
    expect_counts(report, kUnitB, expected_unit_b(kN));
  }
}

// A second thread faults while the main thread is writing the exit-time report (blocked on a full pipe): the crash
// wins. The report ends with its main-backtrace and the process dies of SIGSEGV, instead of exiting 0 as the
// exit path, left alone, would. (The uninstrumented program has no baseline here: it exits before the thread
// faults, as nothing holds its exit back.)
TEST(Torture, CrashOnAnotherThreadDuringTheExitTimeReport) {
  TempDir dir;
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_GE(fcntl(fds[1], F_SETPIPE_SZ, 4096), 4096);
  Launch launch{{SAMPLER_TORTURE, "exit-crash", std::to_string(kN), fifo}, sampling_env(), fds[1], ""};
  launch.env["SAMPLER_REPORT_FD"] = "3";
  Child child(launch, dir);
  close(fds[1]);
  const std::optional<std::string> thread = child.wait_for_line("thread ");
  ASSERT_TRUE(thread) << "the second thread never started";
  const pid_t tid = std::stoi(*thread);
  ASSERT_TRUE(child.wait_for_output("exiting\n"));
  ASSERT_TRUE(wait_until([&] {
    return queued_bytes(fds[0]) == 4096 && current_syscall(child.pid(), child.pid()) == SYS_write;
  })) << "the exit-time report never filled the pipe";
  // The byte that makes the thread fault (it has the FIFO open for reading once open() for writing succeeds).
  int fifo_fd = -1;
  ASSERT_TRUE(wait_until([&] { return (fifo_fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK)) >= 0; }));
  ASSERT_EQ(write(fifo_fd, "x", 1), 1);
  close(fifo_fd);
  // The thread is in the crash handler, waiting for the exit-time writer to let go of the report.
  ASSERT_TRUE(wait_until([&] { return current_syscall(child.pid(), tid) == SYS_nanosleep; }))
      << "the second thread never reached the crash handler";
  const std::string text = read_to_end(fds[0]);
  close(fds[0]);
  EXPECT_EQ(child.wait(), 128 + SIGSEGV);
  EXPECT_EQ(child.err(), "");
  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples", "main-backtrace"})) << text;
  EXPECT_EQ(report.complete, (std::vector<bool>{true, true}));
  expect_counts(report, kUnitA, expected_unit_a(kN));
  expect_counts(report, kUnitB, expected_unit_b(kN));
  expect_resolves(text, kTortureBinary, kTortureSites, dir);
  expect_symbolized(text, kTortureBinary, "torture_fault", dir);
}

// Standard error is a pipe whose reader has gone: the runtime's messages (SAMPLER_VERBOSE, a warning about an
// invalid value) must not kill the program with SIGPIPE.
TEST(Torture, MessagesToAStandardErrorWithoutReader) {
  TempDir dir;
  const std::vector<std::map<std::string, std::string>> cases{{{"SAMPLER_VERBOSE", "1"}},
                                                              {{"SAMPLER_SEED", "not-a-number"}}};
  for (const auto& extra : cases) {
    SCOPED_TRACE(extra.begin()->first);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    close(fds[0]);
    Launch launch{{SAMPLER_TORTURE, "work", std::to_string(kN)}, sampling_env(), std::nullopt, "", fds[1]};
    for (const auto& [name, value] : extra) launch.env[name] = value;
    launch.env["SAMPLER_FILE"] = dir / "report";
    const Outcome outcome = run(launch, dir);
    close(fds[1]);
    EXPECT_EQ(outcome.status, 0);
    const Report report = parse_report(read_file(dir / "report"));
    expect_well_formed(report);
    EXPECT_EQ(report.ids, (std::vector<std::string>{"samples"}));
  }
}

// The report's descriptor is non-blocking (O_NONBLOCK on a pipe shared with a slow reader): a full pipe is waited
// for, not taken as the end of the report.
TEST(Torture, ReportOnANonBlockingPipe) {
  TempDir dir;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_GE(fcntl(fds[1], F_SETPIPE_SZ, 4096), 4096);
  ASSERT_EQ(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
  Launch launch{{SAMPLER_TORTURE, "exit-wait", std::to_string(kN)}, sampling_env(), fds[1], ""};
  launch.env["SAMPLER_REPORT_FD"] = "3";
  Child child(launch, dir);
  close(fds[1]);
  ASSERT_TRUE(child.wait_for_output("exiting\n"));
  ASSERT_TRUE(wait_until([&] { return queued_bytes(fds[0]) == 4096; })) << "the report never filled the pipe";
  const std::string text = read_to_end(fds[0]);
  close(fds[0]);
  EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(child.err(), "");
  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples"})) << text;
  EXPECT_EQ(report.complete, (std::vector<bool>{true}));
  expect_counts(report, kUnitA, expected_unit_a(kN));
  expect_counts(report, kUnitB, expected_unit_b(kN));
}

// Two runs with the same SAMPLER_FILE at the same time: the second must not truncate the first one's report. It
// writes none (and says so); the first one's report comes out whole. Once the first has ended, a new run replaces
// the file as before.
TEST(Torture, TwoRunsWithTheSameReportFile) {
  TempDir dir;
  const std::string file = dir / "report";
  Launch first{{SAMPLER_TORTURE, "sleep", std::to_string(kN)}, sampling_env(), std::nullopt, ""};
  first.env["SAMPLER_FILE"] = file;
  Child running(first, dir);
  ASSERT_TRUE(running.wait_for_output("ready\n"));
  Launch second{{SAMPLER_TORTURE, "work", "10"}, sampling_env(), std::nullopt, ""};
  second.env["SAMPLER_FILE"] = file;
  const Outcome outcome = run(second, dir);
  EXPECT_EQ(outcome.status, 0);
  EXPECT_EQ(outcome.err, "sampler: SAMPLER_FILE: '" + file +
                             "' is being written by another process (%p in the name gives each process its own "
                             "file); no report\n");
  kill(running.pid(), SIGTERM);
  EXPECT_EQ(running.wait(), 128 + SIGTERM);
  const std::string text = read_file(file);
  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples", "main-backtrace"})) << text;
  expect_counts(report, kUnitA, expected_unit_a(kN));
  expect_counts(report, kUnitB, expected_unit_b(kN));
  // The first run is over: its report is an old file now, which the next run replaces.
  const Outcome again = run(second, dir);
  EXPECT_EQ(again.status, 0);
  EXPECT_EQ(again.err, "");
  const Report replaced = parse_report(read_file(file));
  expect_well_formed(replaced);
  ASSERT_EQ(replaced.ids, (std::vector<std::string>{"samples"}));
  expect_counts(replaced, kUnitA, expected_unit_a(10));
}

// SAMPLER_FILE names a file that belongs to another user (a name in a shared directory taken first by someone
// else): the runtime neither truncates it nor writes into it.
TEST(Torture, ReportFileOfAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "making a file of another user needs root";
  TempDir dir;
  const std::string file = dir / "report";
  write_file(file, "someone else's\n");
  ASSERT_EQ(chown(file.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(file.c_str(), 0666), 0);
  Launch launch{{SAMPLER_TORTURE, "work", "10"}, sampling_env(), std::nullopt, ""};
  launch.env["SAMPLER_FILE"] = file;
  const Outcome outcome = run(launch, dir);
  EXPECT_EQ(outcome.status, 0);
  EXPECT_EQ(outcome.err, "sampler: SAMPLER_FILE: '" + file + "' belongs to another user; no report\n");
  EXPECT_EQ(read_file(file), "someone else's\n");
}

// A stack overflow on a second thread: the thread got an alternate signal stack at its first site, so the crash
// handler runs and the report has its main-backtrace; the process dies of SIGSEGV as uninstrumented.
TEST(Torture, StackOverflowOnASecondThread) {
  TempDir dir;
  Launch launch{{SAMPLER_TORTURE, "thread-overflow", std::to_string(kN)}, sampling_env(), std::nullopt, ""};
  launch.env["SAMPLER_FILE"] = dir / "report";
  const Outcome outcome = run(launch, dir);
  Launch plain = launch;
  plain.argv[0] = SAMPLER_TORTURE_UNINSTRUMENTED;
  EXPECT_EQ(outcome.status, run(plain, dir).status);
  EXPECT_EQ(outcome.status, 128 + SIGSEGV);
  EXPECT_EQ(outcome.err, "");
  const std::string text = read_file(dir / "report");
  const Report report = parse_report(text);
  expect_well_formed(report);
  ASSERT_EQ(report.ids, (std::vector<std::string>{"samples", "main-backtrace"})) << text;
  EXPECT_EQ(report.complete, (std::vector<bool>{true, true}));
  std::map<std::string, Rows> unit_a = expected_unit_a(kN);
  unit_a["coverage"] = {{static_cast<uint64_t>(kN)}, {1}, {0}};  // the thread's one site
  expect_counts(report, kUnitA, unit_a);
  expect_counts(report, kUnitB, expected_unit_b(kN));
  bool signal_line = false;
  for (const std::string& line : report.backtrace) {
    signal_line = signal_line || line.rfind("signal:11:SIGSEGV:", 0) == 0;
  }
  EXPECT_TRUE(signal_line) << text;
  expect_symbolized(text, kTortureBinary, "torture_overflow", dir);
}

}  // namespace
}  // namespace sampler
