// Diagnostics: how the formats library reports problems without printing.
//
// The library never writes to stdout or stderr. Every problem goes to a DiagnosticSink that the caller
// provides (a tool prints them; a test collects them). A diagnostic names the file and, for text, the line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sampler {

enum class Severity { kWarning, kError };

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string file;   ///< file name or label ("<stdin>", "lib.a(x.o)"); empty if none applies
  uint64_t line = 0;  ///< 1-based line number in `file`; 0 if none applies
  std::string message;
};

/// Receives diagnostics. Implementations must not throw.
class DiagnosticSink {
 public:
  virtual ~DiagnosticSink() = default;
  virtual void report(const Diagnostic& diagnostic) = 0;

  void warning(std::string file, uint64_t line, std::string message);
  void error(std::string file, uint64_t line, std::string message);
};

/// Keeps every diagnostic (tests, fuzzing).
class DiagnosticList : public DiagnosticSink {
 public:
  void report(const Diagnostic& diagnostic) override { items.push_back(diagnostic); }
  size_t error_count() const;
  size_t warning_count() const;

  std::vector<Diagnostic> items;
};

/// "PROGRAM: 'FILE':LINE: warning: MESSAGE" (or "error:"); the file and line parts are left out when empty/0.
std::string format_diagnostic(std::string_view program, const Diagnostic& diagnostic);

}  // namespace sampler
