// Diagnostics: how the formats library reports problems without printing.
//
// The library never writes to stdout or stderr. Every problem goes to a DiagnosticSink that the caller
// provides (a tool prints them; a test collects them). A diagnostic names the file and, for text, the line; it
// carries a code for the problems a caller may act on, so that callers branch on the code, never on the English.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sampler {

enum class Severity { kWarning, kError };

/// What a diagnostic is about, for callers that act on particular problems (find-sampler-info skips archive
/// members that are not ELF; a collector may tell a report cut short by a crash from a damaged one). The codes
/// are stable; the messages are for people and may change. Most problems need no code of their own: kGeneral.
enum class DiagnosticCode : uint8_t {
  kGeneral = 0,             ///< no code of its own: the message says what is wrong
  kCannotOpen,              ///< a file or directory cannot be opened or read (the system's reason follows)
  kIsDirectory,             ///< a FILE names a directory where a file is needed
  kNotRegularFile,          ///< a FILE names a FIFO, device or socket where a regular file (or pipe) is needed
  kTooLarge,                ///< an input is over a stated limit (a piped FILE, a decompressed size)
  kNotElf,                  ///< a file is neither ELF nor an ar archive
  kArchiveMemberNotElf,     ///< an ar archive member is not ELF (LLVM bitcode, a .deb's tar members)
  kMalformedArchiveMember,  ///< an archive member whose header cannot be used; the later members are still read
  kMalformedElf,            ///< an ELF file or member whose headers are inconsistent or lie about sizes
  kMissingSection,          ///< warning: an ELF file or member lacks the requested section
  kEmptySection,            ///< warning: the requested section holds nothing but NUL bytes
  kCutShort,                ///< warning: a report ends inside a subreport (a crash cut it short; formats.md 3.3)
  kTooManyErrors,           ///< the cap on errors per input was reached: later errors are counted, not reported
};

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string file;   ///< file name or label ("<stdin>", "lib.a(x.o)"); empty if none applies
  uint64_t line = 0;  ///< 1-based line number in `file`; 0 if none applies
  std::string message;
  DiagnosticCode code = DiagnosticCode::kGeneral;
};

/// Receives diagnostics. Implementations must not throw.
class DiagnosticSink {
 public:
  virtual ~DiagnosticSink() = default;
  virtual void report(const Diagnostic& diagnostic) = 0;

  void warning(std::string file, uint64_t line, std::string message);
  void error(std::string file, uint64_t line, std::string message);
  void warning(DiagnosticCode code, std::string file, uint64_t line, std::string message);
  void error(DiagnosticCode code, std::string file, uint64_t line, std::string message);
};

/// The cap on the errors of one input: passes diagnostics on to `sink`, but after kMaxErrors errors one more says
/// that the rest are not reported, and later ones are only counted. Binary garbage given as a report or as site
/// information (or a report of a million bad sections) could otherwise produce one error per line. Warnings pass.
class CappedSink : public DiagnosticSink {
 public:
  static constexpr size_t kMaxErrors = 100;
  explicit CappedSink(DiagnosticSink& sink) : sink_(sink) {}
  void report(const Diagnostic& diagnostic) override;
  /// Every error counted, including those not passed on.
  size_t errors() const { return errors_; }

 private:
  DiagnosticSink& sink_;
  size_t errors_ = 0;
};

/// Keeps every diagnostic (tests, fuzzing).
class DiagnosticList : public DiagnosticSink {
 public:
  void report(const Diagnostic& diagnostic) override { items.push_back(diagnostic); }
  size_t error_count() const;
  size_t warning_count() const;

  std::vector<Diagnostic> items;
};

/// A DiagnosticList that several threads may report to at once (reading threads, symbol sources called from
/// them); read `items` once they are done.
class SerializedList : public DiagnosticList {
 public:
  void report(const Diagnostic& diagnostic) override {
    std::lock_guard lock(mutex_);
    DiagnosticList::report(diagnostic);
  }

 private:
  std::mutex mutex_;
};

/// "PROGRAM: 'FILE':LINE: warning: MESSAGE" (or "error:"); the file and line parts are left out when empty/0.
/// The file and the message go through escape_control_characters(): input bytes (a file name, a value quoted from
/// a report) never reach the terminal as control characters.
std::string format_diagnostic(std::string_view program, const Diagnostic& diagnostic);

/// `text` with every byte that could act on a terminal shown as \xNN (lower-case hex): C0 control characters other
/// than tab, DEL, C1 control characters (U+0080 to U+009F, as UTF-8) and bytes that are not well-formed UTF-8.
/// Printable ASCII, tab and well-formed UTF-8 text are kept as they are.
std::string escape_control_characters(std::string_view text);
/// Appends escape_control_characters(text) to `out`.
void append_escaped(std::string& out, std::string_view text);
/// escape_control_characters(text) with the tab written as \x09 too: a field of tab-separated output.
std::string escape_field(std::string_view text);

/// `text` as a JSON string literal, quotes included, for the tools' JSON output and the collector's answers: `"` and
/// `\` escaped, well-formed UTF-8 kept, every other byte (control characters, DEL, C1 controls, bytes that are not
/// well-formed UTF-8) written as \u00XX, so the result is always valid JSON and safe on a terminal.
std::string json_string(std::string_view text);

}  // namespace sampler
