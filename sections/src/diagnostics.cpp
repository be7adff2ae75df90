// Diagnostics without printing (see sections/diagnostics.h).
#include "sections/diagnostics.h"

#include <algorithm>

namespace sampler {

void DiagnosticSink::warning(std::string file, uint64_t line, std::string message) {
  report(Diagnostic{Severity::kWarning, std::move(file), line, std::move(message)});
}

void DiagnosticSink::error(std::string file, uint64_t line, std::string message) {
  report(Diagnostic{Severity::kError, std::move(file), line, std::move(message)});
}

size_t DiagnosticList::error_count() const {
  return std::count_if(items.begin(), items.end(),
                       [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

size_t DiagnosticList::warning_count() const { return items.size() - error_count(); }

std::string format_diagnostic(std::string_view program, const Diagnostic& diagnostic) {
  std::string text(program);
  text += ": ";
  if (!diagnostic.file.empty()) {
    text += '\'';
    text += diagnostic.file;
    text += '\'';
    if (diagnostic.line != 0) {
      text += ':';
      text += std::to_string(diagnostic.line);
    }
    text += ": ";
  }
  text += diagnostic.severity == Severity::kWarning ? "warning: " : "error: ";
  text += diagnostic.message;
  return text;
}

}  // namespace sampler
