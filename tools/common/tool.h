// What every sampler command-line tool shares: one option table that drives both parsing and --help,
// --version, diagnostics on stderr ("tool: 'file':line: error: ..."), buffered stdout, and the exit statuses
// of docs/tools.md (0 success, 1 the data is wrong or missing, 2 usage error).
//
// A tool's main is: describe its options in a Usage, parse_command_line(), one library call, exit status.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sections/diagnostics.h"
#include "sections/progress.h"

namespace sampler::tool {

constexpr int kExitSuccess = 0;
constexpr int kExitDataError = 1;
constexpr int kExitUsage = 2;

/// One command-line option. Every tool also accepts --help and --version without listing them.
struct Option {
  const char* long_name;  ///< without the leading "--"
  char short_name;        ///< 0 if none
  const char* argument;   ///< name of the option's argument for --help, nullptr for a flag
  const char* help;       ///< one line for --help
};

/// Everything --help prints, and what parsing needs to know.
struct Usage {
  const char* program;      ///< the tool's name, as diagnostics prefix it
  const char* synopsis;     ///< operands after the program name, e.g. "[--require] SECTION FILE..."
  const char* summary;      ///< one sentence: what the tool does
  std::span<const Option> options;
  const char* details;      ///< paragraphs after the option list (may be nullptr)
};

/// The outcome of parsing argv.
class CommandLine {
 public:
  /// The argument of option `long_name` (last occurrence), or nullopt if it was not given.
  std::optional<std::string> value(std::string_view long_name) const;
  /// Every argument of option `long_name`, in order (a repeatable option).
  std::vector<std::string> values(std::string_view long_name) const;
  /// True if flag or option `long_name` was given.
  bool has(std::string_view long_name) const;

  std::vector<std::string> operands;  ///< the non-option arguments, in order
  /// Set when the tool must exit at once with this status: after --help or --version (0, already printed),
  /// or after a usage error (2, already reported on stderr).
  std::optional<int> exit_status;

 private:
  friend CommandLine parse_command_line(const Usage&, int, char**);
  std::vector<std::pair<std::string, std::string>> given_;
};

/// Parses argv against usage. Accepts --name, --name=value, --name value, -x, -x value, and "--" to end the
/// options. Handles --help (usage on stdout) and --version itself.
CommandLine parse_command_line(const Usage& usage, int argc, char** argv);

/// Prints "PROGRAM: MESSAGE" and "Try 'PROGRAM --help' for more information." on stderr; returns kExitUsage.
int usage_error(const Usage& usage, std::string_view message);

/// For tools whose own option is named like a common one (sampler-run's and sampler-analyze's `--version V`, the
/// application's version): returns argv with the first "--NAME VALUE" (VALUE not starting with '-') joined into
/// "--NAME=VALUE", which parse_command_line takes as the option; a lone --version stays the tool's. `storage`
/// keeps the joined text; the result ends with a null pointer, its size minus one is the new argc.
std::vector<char*> join_option_value(int argc, char** argv, std::string_view name, std::string& storage);

class Output;

/// Prints every diagnostic on stderr, prefixed by the program's name, and counts them. Standard output (the
/// given Output, else stdio's stdout) is flushed first, so that a message follows the output that came before
/// it when both streams go to the same place.
class StderrSink : public DiagnosticSink {
 public:
  explicit StderrSink(std::string program, Output* flush_first = nullptr)
      : program_(std::move(program)), flush_first_(flush_first) {}
  void report(const Diagnostic& diagnostic) override;
  /// A progress line on the same terminal: erased before each diagnostic, which then has a line of its own.
  void set_progress(Progress* progress) { progress_ = progress; }
  size_t errors() const { return errors_; }
  size_t warnings() const { return warnings_; }

 private:
  std::string program_;
  Output* flush_first_;
  Progress* progress_ = nullptr;
  size_t errors_ = 0;
  size_t warnings_ = 0;
};

/// Buffered writer to a file descriptor (standard output by default). Large spans bypass the buffer so that
/// big sections go out without being copied. A write error (other than being interrupted) is remembered;
/// further output is dropped and failed() says so.
class Output {
 public:
  explicit Output(int fd = 1, size_t buffer_size = 1u << 20);
  ~Output();  ///< flushes
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void write(std::string_view text);
  void write(char c);
  /// Flushes the buffer; returns false if any write failed.
  bool flush();
  bool failed() const { return failed_; }
  /// errno of the first failed write (valid when failed()).
  int error_number() const { return error_number_; }

 private:
  void write_through(std::string_view text);

  int fd_;
  std::vector<char> buffer_;
  size_t used_ = 0;
  bool failed_ = false;
  int error_number_ = 0;
};

/// Flushes `output` and, if writing failed, reports it ("cannot write standard output: ...") to `sink`.
/// Returns false if writing failed. Tools call this last and exit 1 on false.
bool finish_output(Output& output, DiagnosticSink& sink);

}  // namespace sampler::tool
