// A cap on the diagnostics one input can produce (private to the formats library).
//
// The parsers keep reading after the cap (everything good after the garbage is still delivered) and their result
// still says that errors occurred.
#pragma once

#include <cstdint>
#include <string>

#include "sections/diagnostics.h"

namespace sampler {

// CappedSink (sections/diagnostics.h) with the input's name: the parsers' errors name their line only.
class LimitedDiagnostics {
 public:
  static constexpr size_t kMaxErrors = CappedSink::kMaxErrors;

  LimitedDiagnostics(DiagnosticSink& sink, std::string file) : capped_(sink), file_(std::move(file)) {}

  void error(uint64_t line, std::string message) { capped_.error(file_, line, std::move(message)); }
  void warning(uint64_t line, std::string message) { capped_.warning(file_, line, std::move(message)); }
  void warning(DiagnosticCode code, uint64_t line, std::string message) {
    capped_.warning(code, file_, line, std::move(message));
  }

  /// Every error counted, including those not reported.
  size_t errors() const { return capped_.errors(); }

 private:
  CappedSink capped_;
  std::string file_;
};

}  // namespace sampler
