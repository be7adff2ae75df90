// A cap on the diagnostics one input can produce (private to the formats library).
//
// Binary garbage given as a report or as site information could otherwise produce one error per line, millions
// of them. After kMaxErrors errors, one more says that the rest are not reported; the parsers keep reading
// (everything good after the garbage is still delivered) and their result still says that errors occurred.
#pragma once

#include <cstdint>
#include <string>

#include "sections/diagnostics.h"

namespace sampler {

class LimitedDiagnostics {
 public:
  static constexpr size_t kMaxErrors = 100;

  LimitedDiagnostics(DiagnosticSink& sink, std::string file) : sink_(sink), file_(std::move(file)) {}

  void error(uint64_t line, std::string message) {
    ++errors_;
    if (errors_ <= kMaxErrors) {
      sink_.error(file_, line, std::move(message));
    } else if (errors_ == kMaxErrors + 1) {
      sink_.error(DiagnosticCode::kTooManyErrors, file_, line,
                  "too many errors (" + std::to_string(kMaxErrors) +
                      "); the rest of this input is still read, but its errors are not reported");
    }
  }
  void warning(uint64_t line, std::string message) { sink_.warning(file_, line, std::move(message)); }
  void warning(DiagnosticCode code, uint64_t line, std::string message) {
    sink_.warning(code, file_, line, std::move(message));
  }

  /// Every error counted, including those not reported.
  size_t errors() const { return errors_; }

 private:
  DiagnosticSink& sink_;
  std::string file_;
  size_t errors_ = 0;
};

}  // namespace sampler
