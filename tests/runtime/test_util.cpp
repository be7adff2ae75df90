// Helpers for the runtime's behaviour tests (see test_util.h).
#include "test_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "sections/diagnostics.h"
#include "sections/line_reader.h"
#include "sections/report.h"

extern char** environ;

namespace sampler::testing {
namespace {

void drain(int fd, std::string& into) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    into.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
}

std::vector<std::string> base_environment() {
  std::vector<std::string> result;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.rfind("SAMPLER_", 0) == 0) continue;
    result.push_back(entry);
  }
  return result;
}

}  // namespace

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  int in[2], out[2], err[2];
  if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0) throw std::runtime_error("pipe");
  std::vector<std::string> env = base_environment();
#if defined(__SANITIZE_ADDRESS__)
  // In a sanitizer build the examples carry AddressSanitizer, whose own handlers would turn the crashes under
  // test into a report and exit(1): leave the fatal signals to the program (and to libsampler).
  if (getenv("ASAN_OPTIONS") == nullptr) {
    env.push_back("ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:"
                  "detect_leaks=0");
  }
#endif
#if defined(__SANITIZE_THREAD__)
  if (getenv("TSAN_OPTIONS") == nullptr) {
    env.push_back("TSAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0");
  }
#endif
  for (const auto& [name, value] : options.env) env.push_back(name + "=" + value);
  std::vector<char*> env_pointers, arg_pointers;
  for (std::string& e : env) env_pointers.push_back(e.data());
  env_pointers.push_back(nullptr);
  std::vector<std::string> args = argv;
  for (std::string& a : args) arg_pointers.push_back(a.data());
  arg_pointers.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    struct rlimit no_core {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    if (options.fd3_file) {
      int fd = open(options.fd3_file->c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd != 3) {
        dup2(fd, 3);
        close(fd);
      }
    }
    execve(arg_pointers[0], arg_pointers.data(), env_pointers.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  RunResult result;
  result.pid = pid;
  std::thread out_reader(drain, out[0], std::ref(result.out));
  std::thread err_reader(drain, err[0], std::ref(result.err));
  if (!options.input.empty()) {
    ssize_t ignored = write(in[1], options.input.data(), options.input.size());
    (void)ignored;
  }
  close(in[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  out_reader.join();
  err_reader.join();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool file_exists(const std::string& path) { return std::filesystem::exists(path); }

namespace {
struct TempRoot {
  std::string path;
  TempRoot() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sampler-runtime-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path = pattern;
  }
  ~TempRoot() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};
}  // namespace

std::string make_temp_dir() {
  static TempRoot root;
  static int counter = 0;
  std::string dir = root.path + "/" + std::to_string(counter++);
  std::filesystem::create_directories(dir);
  return dir;
}

namespace {

class Collector : public ReportVisitor {
 public:
  explicit Collector(ParsedReport& report) : report_(report) {}
  void begin_subreport(std::string_view id, uint64_t) override {
    report_.subreport_ids.emplace_back(id);
    report_.bodies.emplace_back();
  }
  void body_line(std::string_view line, uint64_t) override { report_.bodies.back().emplace_back(line); }
  void end_subreport(bool complete) override { report_.subreport_complete.push_back(complete); }

 private:
  ParsedReport& report_;
};

class SectionCollector : public SamplesVisitor {
 public:
  explicit SectionCollector(ParsedReport& report) : report_(report) {}
  void begin_section(const SampleSectionHeader& header) override {
    Section section;
    section.kind = header.kind == SampleSectionKind::kSamples ? "samples" : "timestamps";
    section.unit = header.unit;
    section.scheme = header.scheme;
    section.when = header.when;
    report_.sections.push_back(section);
  }
  void section_line(std::string_view line, uint64_t) override {
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
      size_t tab = line.find('\t', start);
      fields.emplace_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    report_.sections.back().rows.push_back(fields);
  }
  void end_section(bool complete) override { report_.sections.back().complete = complete; }

 private:
  ParsedReport& report_;
};

void collect(const DiagnosticList& list, ParsedReport& report) {
  for (const Diagnostic& d : list.items) report.diagnostics.push_back(format_diagnostic("report", d));
}

}  // namespace

ParsedReport parse_report(const std::string& text) {
  ParsedReport report;
  {
    DiagnosticList diagnostics;
    LineReader reader(std::string_view(text), "report", diagnostics);
    Collector collector(report);
    read_report(reader, collector);
    collect(diagnostics, report);
  }
  {
    DiagnosticList diagnostics;
    LineReader reader(std::string_view(text), "report", diagnostics);
    SectionCollector collector(report);
    read_samples(reader, collector);
    collect(diagnostics, report);
  }
  return report;
}

std::vector<const Section*> find_sections(const ParsedReport& report, const std::string& unit,
                                          const std::string& scheme, const std::string& kind) {
  std::vector<const Section*> found;
  for (const Section& s : report.sections) {
    if (s.unit == unit && s.scheme == scheme && s.kind == kind) found.push_back(&s);
  }
  return found;
}

std::vector<std::vector<uint64_t>> numbers(const Section& section) {
  std::vector<std::vector<uint64_t>> rows;
  for (const auto& row : section.rows) {
    std::vector<uint64_t> values;
    for (const std::string& field : row) values.push_back(std::stoull(field));
    rows.push_back(values);
  }
  return rows;
}

}  // namespace sampler::testing
