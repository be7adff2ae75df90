// sampler-run's process supervision (launcher/launcher.h). The order matters for transparency: the report
// descriptor is a memfd (private, never a standard descriptor), signals sent to the launcher are passed on to the
// program, and after the program ends the launcher uploads within a bounded time (upload.h) and then exits as the
// program did.
#include "launcher/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include "collector/outcome.h"
#include "last_report.h"
#include "libraries.h"
#include "plans.h"
#include "private_files.h"
#include "sections/diagnostics.h"
#include "sections/hex.h"
#include "sections/line_reader.h"
#include "sections/lines.h"
#include "sections/report.h"
#include "shared_counters.h"
#include "upload.h"

namespace sampler::launcher {
namespace {

namespace fs = std::filesystem;
using collector::format_interim;
using collector::format_outcome;
using collector::Outcome;

volatile sig_atomic_t child_pid = 0;

// Signals someone sent to the launcher (kill, systemd, a supervisor) go on to the program. Those the terminal
// sent (Ctrl-C: si_code SI_KERNEL) reached the program already, as it is in the same process group.
void forward_signal(int signal_number, siginfo_t* info, void*) {
  if (child_pid > 0 && info != nullptr && info->si_code <= 0) kill(child_pid, signal_number);
}

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

// Which of the report's last subreport and section the program left open (read as the formats library reads).
class OpenEnds : public ReportVisitor, public SamplesVisitor {
 public:
  void begin_subreport(std::string_view id, uint64_t) override {
    subreport_cut = false, section_cut = false;
    in_samples = id == "samples";
  }
  void end_subreport(bool complete) override {
    subreport_cut = !complete;
    samples_whole = samples_whole || (in_samples && complete);
  }
  void begin_section(const SampleSectionHeader& header) override {
    section_cut = false;
    section_line = header.line;
  }
  void end_section(bool complete) override { section_cut = !complete; }

  bool subreport_cut = false, section_cut = false;
  bool in_samples = false, samples_whole = false;
  uint64_t section_line = 0;  // of the last section's start tag
};

// A program killed while writing its report leaves the last subreport open, maybe in the middle of a line
// (docs/formats.md, "Cut short"). Readers take that at the end of a report, but the outcome goes after it: the
// report is ended first. The partial line goes (a counter cut short reads as a smaller number, a tag cut short
// as text). An open samples or timestamps section goes too: closed, it would look whole, and the analysis would
// refuse it for its missing lines (an error per run). The open subreport gets its end tag: what was whole stays.
// Returns true if the report holds a whole samples subreport and is final: not an interim report
// (sampler_write_report(), docs/instrumenting.md), which the program would have replaced at its end.
bool end_cut_report(std::string& text) {
  if (!text.empty() && text.back() != '\n') text.resize(text.rfind('\n') + 1);  // npos + 1: no whole line
  if (text.empty()) return false;
  // A last line </report> closes whatever was open (the usual, whole report, whose samples subreport comes
  // first): no need to read it all at exit. An interim report ends with its `interim` subreport, three short lines.
  if (text.ends_with("\n</report>\n") || text.ends_with("\n</report>\r\n")) {
    constexpr size_t kInterimTail = 128;
    return text.find("\n<report id=\"interim\">", text.size() > kInterimTail ? text.size() - kInterimTail : 0) ==
           std::string::npos;
  }
  DiagnosticList ignored;  // the collector says what is wrong with a report; here only its open ends matter
  OpenEnds ends;
  LineReader input(text, "report", ignored);
  read_report(input, ends, ends);
  if (ends.section_cut && ends.section_line > 0) {
    size_t start = 0;  // of line section_line
    for (uint64_t line = 1; line < ends.section_line; ++line) text::next_line(text, start);
    text.resize(start);
  }
  if (ends.subreport_cut) text += "</report>\n";
  return ends.samples_whole;
}

/// A new memfd named `name`, moved above the standard descriptors (the program may have closed them:
/// docs/decisions.md), inherited by the program; -1 with errno set when it cannot be made.
int memfd_above_standard_descriptors(const char* name) {
  int memfd = memfd_create(name, 0);
  int fd = memfd >= 0 ? fcntl(memfd, F_DUPFD, 3) : -1;
  const int error = errno;
  if (memfd >= 0) close(memfd);
  errno = error;
  return fd;
}

/// The shared counters' memfd (shared_counters.h), moved above the standard descriptors and inherited by the
/// program; -1 (and the program runs without it, as it would without sampler-run's help) when it cannot be made.
int make_shared_counters(const LaunchSettings& settings) {
  int fd = memfd_above_standard_descriptors("sampler-counters");
  // Sparse: only the pages the program's counters fill take memory.
  if (fd >= 0 && ftruncate(fd, static_cast<off_t>(kSharedCountersBytes)) != 0) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) say(settings, std::string("no shared counters: ") + std::strerror(errno));
  return fd;
}

/// What the runtime's own reader (write_shared_samples) made of a shared counters mapping.
struct CountersSamples {
  std::string text;  ///< the samples subreport; "" when never claimed or over kMaxReportBytes
  runtime::SharedSnapshot snapshot;
  bool too_large = false;  ///< the samples subreport would exceed kMaxReportBytes
};

/// The samples subreport of the shared counters in `fd` (sampler-run's memfd, or %c's counters file) of `size`
/// bytes, as the runtime's report writer writes it.
CountersSamples samples_of_counters(int fd, size_t size) {
  CountersSamples samples;
  void* mapping = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) return samples;
  char buffer[64 * 1024];
  const runtime::Sink sink{&samples.text, [](void* context, const char* data, size_t bytes) {
                    auto& out = *static_cast<std::string*>(context);
                    if (out.size() + bytes > kMaxReportBytes) return false;
                    out.append(data, bytes);
                    return true;
                  }};
  runtime::ReportWriter out(buffer, sizeof buffer, sink);
  samples.snapshot = runtime::write_shared_samples(static_cast<const unsigned char*>(mapping), size, out);
  out.flush();
  munmap(mapping, size);
  samples.too_large = out.failed();
  if (!samples.snapshot.claimed || samples.too_large) samples.text.clear();
  return samples;
}

/// The samples subreport of the shared counters; "" when the program never used them (not instrumented, or an
/// older runtime) or their report would exceed kMaxReportBytes.
std::string read_shared_counters(const LaunchSettings& settings, int fd) {
  struct stat st{};
  if (fstat(fd, &st) != 0 || !runtime::shared_size_in_bounds(st.st_size)) return {};
  CountersSamples samples = samples_of_counters(fd, static_cast<size_t>(st.st_size));
  if (!samples.snapshot.claimed) return {};
  if (samples.snapshot.problem != nullptr) say(settings, std::string("shared counters: ") + samples.snapshot.problem);
  if (samples.snapshot.units_left_out > 0) {
    say(settings, std::to_string(samples.snapshot.units_left_out) + " units did not fit in the shared counters");
  }
  if (samples.too_large) {
    say(settings, "the shared counters' report is larger than " + std::to_string(kMaxReportBytes) + " bytes");
  }
  return std::move(samples.text);
}

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(buffer.data() + got, bytes - got, 0);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) got += static_cast<size_t>(n);
  }
  return hex_bytes(buffer.data(), buffer.size());
}

// execvp's search, to name the file for its build ID.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st{};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return name;
    dirs.remove_prefix(colon + 1);
  }
}

/// The outcome's description of the run, whatever its end: its id, the application, the sampling, the build IDs
/// of the program and of the instrumented libraries it loads at start-up.
Outcome describe_run(const LaunchSettings& settings, const std::string& run_id, const std::string& seed,
                     const std::vector<std::string>& argv, char** envp) {
  Outcome outcome;
  outcome.run_id = run_id;
  outcome.app = settings.app;
  outcome.version = settings.version;
  outcome.sparsity = settings.sparsity;
  outcome.seed = seed;
  std::string program = find_program(argv[0]);
  std::error_code ec;
  std::string absolute = fs::absolute(program, ec).lexically_normal().string();
  outcome.build_ids.emplace_back(ec ? program : absolute, read_build_id(program));
  for (auto& [library, id] : instrumented_libraries(ec ? program : absolute, envp,
                                                    settings.state_dir.empty() ? "" : settings.state_dir + "/libraries")) {
    outcome.build_ids.emplace_back(library, id);
  }
  return outcome;
}

/// The CPU time (user + system) process `pid` has used so far, from /proc/PID/stat (0 when it cannot be read):
/// wait4's usage comes only at the end.
double cpu_seconds_so_far(pid_t pid) {
  std::string stat;
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  if (!std::getline(file, stat)) return 0;
  // After the command's name (in parentheses, which may hold anything): state is field 3, utime 14, stime 15.
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::string_view rest = std::string_view(stat).substr(close_paren + 1);
  unsigned long long ticks = 0;
  for (int field = 3; field <= 15 && !rest.empty(); ++field) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    size_t end = std::min(rest.find(' '), rest.size());
    if (field >= 14) ticks += std::strtoull(std::string(rest.substr(0, end)).c_str(), nullptr, 10);
    rest.remove_prefix(end);
  }
  const long per_second = sysconf(_SC_CLK_TCK);
  return per_second > 0 ? static_cast<double>(ticks) / static_cast<double>(per_second) : 0;
}

/// --interval: until the program ends, every interval, its shared counters so far go to the collector as an
/// interim report of the run (samples, the `interim` subreport with the next sequence number, an outcome without
/// an end). The program does nothing for it. An interim report the collector cannot take is not spooled: the
/// next one, or the final report, holds all it held.
void send_interim_reports(const LaunchSettings& settings, pid_t pid, int shared_fd, Clock::time_point start,
                          const std::function<Outcome()>& describe, const std::string& plan_subreport) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    say(settings, std::string("no interim reports: cannot watch the program: ") + std::strerror(errno));
    return;
  }
  const auto interval = std::chrono::seconds(settings.interval_seconds);
  const std::chrono::milliseconds bound(settings.upload_timeout_ms);
  Clock::time_point next = start + interval;
  uint64_t sequence = 0;
  for (;;) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
    pollfd ended{pidfd, POLLIN, 0};
    const int ready = poll(&ended, 1, static_cast<int>(std::clamp<int64_t>(wait, 0, INT32_MAX)));
    if (ready < 0 && errno == EINTR) continue;  // a signal forwarded to the program
    if (ready != 0) break;  // the program ended (or poll failed: then it is waited for as without --interval)
    // The next snapshot one interval on; an upload slower than the interval skips one rather than piling up.
    next += interval;
    if (next <= Clock::now()) next = Clock::now() + interval;
    std::string text = read_shared_counters(settings, shared_fd);
    if (text.empty()) continue;  // the program has not placed its counters (yet)
    text += plan_subreport;
    Outcome outcome = describe();
    outcome.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    outcome.cpu_seconds = cpu_seconds_so_far(pid);
    text += format_interim(++sequence);
    text += format_outcome(outcome);
    const std::string gz = gzip_text(text, Clock::now() + bound / 2);
    std::string answer;
    const UploadStatus sent = upload_report(settings.upload_url, settings.api_key, gz, settings.upload_timeout_ms,
                                            answer, settings.ca_file);
    say(settings, "interim report " + std::to_string(sequence) + " of run " + outcome.run_id +
                      (sent == UploadStatus::kSent ? " sent to " + settings.upload_url + ": " + answer
                                                   : " not sent (" + settings.upload_url + "): " + answer));
  }
  close(pidfd);
}

/// The program's environment: ours, with the runtime's variables set for this run (docs/instrumenting.md
/// section 2); the shared counters' descriptor and the plan only when there is one.
std::vector<std::string> child_environment(const LaunchSettings& settings, int report_fd, int shared_fd,
                                           const std::string& seed, const ChosenPlan& plan) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry = *e;
    if (entry.starts_with("SAMPLER_REPORT_FD=") || entry.starts_with("SAMPLER_SPARSITY=") ||
        entry.starts_with("SAMPLER_SEED=") || entry.starts_with("SAMPLER_FILE=") ||
        entry.starts_with("SAMPLER_SHARED_FD=") || entry.starts_with("SAMPLER_PLAN=")) {
      continue;
    }
    environment.emplace_back(entry);
  }
  environment.push_back("SAMPLER_REPORT_FD=" + std::to_string(report_fd));
  if (shared_fd >= 0) environment.push_back("SAMPLER_SHARED_FD=" + std::to_string(shared_fd));
  environment.push_back("SAMPLER_SPARSITY=" + settings.sparsity);
  environment.push_back("SAMPLER_SEED=" + seed);
  if (!plan.path.empty()) environment.push_back("SAMPLER_PLAN=" + plan.path);
  return environment;
}

/// The report as the program wrote it to its descriptor; "" (the outcome goes alone) when it is over
/// kMaxReportBytes.
std::string read_report(const LaunchSettings& settings, int report_fd) {
  std::string text;
  struct stat st{};
  if (fstat(report_fd, &st) == 0 && st.st_size > 0 && static_cast<size_t>(st.st_size) <= kMaxReportBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      ssize_t r = pread(report_fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
      if (r <= 0 && errno != EINTR) break;
      if (r > 0) got += static_cast<size_t>(r);
    }
    text.resize(got);
  } else if (st.st_size > 0) {
    say(settings, "the report is larger than " + std::to_string(kMaxReportBytes) + " bytes: sending the outcome only");
  }
  return text;
}

}  // namespace

int launch(const LaunchSettings& settings, const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (!settings.enabled) {
    // Opted out: the program runs as if sampler-run were not there.
    execvp(args[0], args.data());
    int error = errno;
    std::fprintf(stderr, "sampler-run: cannot run '%s': %s\n", escape_control_characters(args[0]).c_str(),
                 std::strerror(error));
    return error == ENOENT ? 127 : 126;
  }
  // The plan, checked before the program starts: a plan the runtime would refuse is refused here, with its line.
  ChosenPlan plan;
  if (std::string error; !choose_plan(settings, plan, error)) {
    std::fprintf(stderr, "sampler-run: %s\n", escape_control_characters(error).c_str());
    return 2;  // bad input, as a malformed configuration file
  }
  // What a report sampler-run writes from the shared counters says of the plan, as the runtime's own would.
  const std::string plan_subreport = plan.path.empty() ? "" : format_plan_subreport(plan.id, settings.sparsity);
  // The report descriptor.
  int report_fd = memfd_above_standard_descriptors("sampler-report");
  if (report_fd < 0) {
    std::fprintf(stderr, "sampler-run: cannot create the report descriptor: %s\n", std::strerror(errno));
    return 126;
  }
  std::string seed = settings.seed.empty() ? std::to_string(std::strtoull(random_hex(8).c_str(), nullptr, 16))
                                           : settings.seed;
  const int shared_fd = make_shared_counters(settings);
  std::vector<std::string> environment = child_environment(settings, report_fd, shared_fd, seed, plan);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  struct sigaction forward{};
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  struct sigaction previous[std::size(kForwardedSignals)];
  // Block them while the program starts: a signal in between would find no child to forward to.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int signal_number : kForwardedSignals) sigaddset(&forwarded, signal_number);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &forward, &previous[i]);

  // posix_spawnp (vfork and exec underneath): cheaper than fork for a launcher that must add little to the
  // run, and it reports a failed exec as its result. The child gets the mask the launcher had, and signals
  // that were ignored stay ignored; handled ones are reset by exec, as usual.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setsigmask(&attributes, &old_mask);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  Clock::time_point start = Clock::now();
  pid_t pid = 0;
  int spawn_error = posix_spawnp(&pid, args[0], nullptr, &attributes, args.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  if (spawn_error == 0) child_pid = pid;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (spawn_error != 0) {
    if (shared_fd >= 0) close(shared_fd);
    for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &previous[i], nullptr);
    std::fprintf(stderr, "sampler-run: cannot run '%s': %s\n", escape_control_characters(args[0]).c_str(),
                 std::strerror(spawn_error));
    return spawn_error == ENOENT ? 127 : 126;
  }
  // What the outcome says of the run whatever its end, worked out once (the build IDs cost a look-up): the interim
  // reports and the final one carry the same run id.
  std::optional<Outcome> described;
  auto describe = [&]() -> Outcome {
    if (!described) described = describe_run(settings, random_hex(16), seed, argv, envp.data());
    return *described;
  };
  if (settings.interval_seconds > 0 && shared_fd >= 0 && !settings.upload_url.empty()) {
    send_interim_reports(settings, pid, shared_fd, start, describe, plan_subreport);
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  child_pid = 0;
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &previous[i], nullptr);
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(settings.upload_timeout_ms);

  // The report as the program wrote it, then the outcome.
  std::string text = read_report(settings, report_fd);
  close(report_fd);
  // A program killed before its report was whole (SIGKILL, a crash its handler could not survive) left its
  // counters in the shared mapping: they replace the cut samples (they hold every unit, those already written too).
  if (!end_cut_report(text) && shared_fd >= 0) {
    std::string shared = read_shared_counters(settings, shared_fd);
    if (!shared.empty()) {
      say(settings, "the program wrote no whole report: its samples come from the shared counters");
      text = std::move(shared) + plan_subreport;
    }
  }
  if (shared_fd >= 0) close(shared_fd);
  Outcome outcome = describe();
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status); else outcome.exit_status = WEXITSTATUS(status);
  outcome.wall_seconds = wall;
  outcome.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  text += format_outcome(outcome);

  std::error_code ec;
  std::string result;
  if (!settings.keep_dir.empty()) {
    // A directory the user named may be shared: new files only (0600, never through a link), under a fresh name.
    if (mkdir(settings.keep_dir.c_str(), 0700) != 0 && errno != EEXIST) fs::create_directories(settings.keep_dir, ec);
    if (!write_private_file(settings.keep_dir + "/" + outcome.run_id + ".report", text)) {
      say(settings, "cannot keep a copy in '" + settings.keep_dir + "'");
    }
  }
  if (!settings.upload_url.empty()) {
    result = deliver(settings, outcome.run_id, text, deadline);
  } else {
    result = "not sent (no upload URL)";
  }
  result = escape_control_characters(result);  // one line in "last", whatever the collector answered
  if (std::string why; !settings.state_dir.empty() && !(make_private_dir(settings.state_dir, why) &&
                                                         write_last(settings.state_dir + "/last",
                                                                    "report " + outcome.run_id + " " + result + "\n",
                                                                    text))) {
    say(settings, "--show-last will not have this report: " + (why.empty() ? "cannot write '" + settings.state_dir +
                                                                             "/last'" : why));
  }

  if (WIFSIGNALED(status)) {
    // Die as the program died. The program dumped its own core; the launcher must not add a second.
    int signal_number = WTERMSIG(status);
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    std::fflush(nullptr);
    signal(signal_number, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal_number);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    raise(signal_number);
    return 128 + signal_number;  // a signal whose default is not to terminate
  }
  return WEXITSTATUS(status);
}

namespace {

/// recover_report()'s second source: the samples subreport of the counters file `counters`, open as `fd`.
bool recover_from_counters(const std::string& counters, int fd, std::string& report, DiagnosticSink& sink) {
  struct stat st{};
  bool ok = false;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    sink.error(counters, 0, "not a counters file (not a regular file)");
  } else if (!runtime::shared_size_in_bounds(st.st_size)) {
    sink.error(counters, 0, "not a counters file (" + std::to_string(st.st_size) +
                                " bytes; a counters file has one page to 1 GiB): truncated?");
  } else {
    // The runtime holds an exclusive lock on its counters file for as long as it runs.
    if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      sink.warning(counters, 0, "in use by a running process: its counters so far");
    }
    CountersSamples samples = samples_of_counters(fd, static_cast<size_t>(st.st_size));
    if (!samples.snapshot.claimed) {
      sink.error(counters, 0, "not a counters file, or one no process has counted in (no header)");
    } else if (samples.too_large) {
      sink.error(counters, 0, "its report would be larger than " + std::to_string(kMaxReportBytes) + " bytes");
    } else {
      const uint64_t units = samples.snapshot.units;
      ok = samples.snapshot.problem == nullptr;
      // Damaged part-way: the whole records before the damage are still reported (and the status says it).
      if (ok || units > 0) report = std::move(samples.text);
      if (!ok) {
        sink.error(counters, 0, std::string(samples.snapshot.problem) +
                                    (units > 0 ? "; the " + std::to_string(units) + " units before it are reported"
                                               : ""));
      }
      if (samples.snapshot.units_left_out > 0) {
        sink.warning(counters, 0, std::to_string(samples.snapshot.units_left_out) +
                                      " units did not fit in it: their samples are missing");
      }
    }
  }
  return ok;
}

}  // namespace

bool recover_report(const std::string& name, std::string& report, DiagnosticSink& sink) {
  report.clear();
  // The report file first: a normal exit or a crash report left it whole, and it holds more than the samples.
  const int report_fd = open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  const int report_error = errno;
  if (report_fd >= 0) {
    std::string text = read_report(LaunchSettings{}, report_fd);
    close(report_fd);
    if (end_cut_report(text)) {
      report = std::move(text);
      return true;
    }
  } else if (report_error != ENOENT) {
    sink.error(name, 0, std::string("cannot read the report: ") + std::strerror(report_error));
    return false;
  }
  // No whole report: the run was killed, or ended before writing it. Its counters file says what it counted.
  const std::string counters = name + runtime::kCountersSuffix;
  const int fd = open(counters.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error != ENOENT) {
      sink.error(counters, 0, std::string("cannot read the counters: ") + std::strerror(error));
    } else if (report_fd >= 0) {
      sink.error(name, 0, "holds no whole report, and there is no counters file beside it (SAMPLER_FILE without %c?)");
    } else {
      sink.error(name, 0, "no such report, and no counters file beside it");
    }
    return false;
  }
  const bool ok = recover_from_counters(counters, fd, report, sink);
  close(fd);
  return ok;
}

}  // namespace sampler::launcher
