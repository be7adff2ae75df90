// The report writer (docs/formats.md section 3; sampler manual, "Dynamic Feedback Reports"): text buffered over a sink.
//
// One writer interface (a callback and its context, as in compiler-rt's profile runtime): a descriptor sink at
// exit, at dlclose and in the crash handler, a memory sink in tests. The writer formats into a caller-provided
// buffer and flushes whole lines, so a report on disk always ends at a line boundary unless a single line is
// longer than the buffer. Async-signal-safe: no allocation, no libc call (report_writer_signal_safe.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sampler/abi.h"

namespace sampler::runtime {

/// Where report bytes go. write() returns false on a failure; the writer then stops writing.
struct Sink {
  void* context;
  bool (*write)(void* context, const char* data, size_t size);
};

/// The write function of a descriptor sink: writes to the descriptor *context (an int), retrying partial writes
/// and EINTR.
bool write_to_descriptor(void* context, const char* data, size_t size);

/// A sink writing to the descriptor *fd (read at each write, so the descriptor may be set later).
constexpr Sink descriptor_sink(int* fd) { return Sink{fd, write_to_descriptor}; }

/// What is open in the text flushed so far (used by the crash path to close what an interrupted writer left).
enum class OpenSection : uint8_t { kNone, kSamples, kTimestamps };

class ReportWriter {
 public:
  /// `buffer` (capacity >= 256 bytes) must outlive the writer.
  constexpr ReportWriter(char* buffer, size_t capacity, Sink sink)
      : buffer_(buffer), capacity_(capacity), sink_(sink) {}

  void append(const char* text, size_t length);
  void append(const char* c_string);
  void append(char c);
  void append_decimal(uint64_t value);
  void append_signed_decimal(int64_t value);
  /// "0x" and lower-case hexadecimal digits, no padding.
  void append_hex(uint64_t value);
  /// An XML attribute value: & < > " ' become entities.
  void append_attribute(const char* value);
  /// Ends a line; flushes when the buffer cannot hold another typical line.
  void end_line();
  /// Writes the buffered bytes to the sink. False once the sink has failed.
  bool flush();

  bool failed() const { return failed_; }
  /// Bytes handed to the sink so far.
  uint64_t flushed_bytes() const { return flushed_bytes_; }

  /// Section state, maintained by write_scheme() and captured at each flush.
  void set_open_section(OpenSection section) { open_section_ = section; }
  OpenSection flushed_open_section() const { return flushed_open_section_; }
  /// True when the flushed text ends in the middle of a line.
  bool flushed_mid_line() const { return flushed_mid_line_; }
  /// True while flush() is handing bytes to the sink. A signal handler on the same thread then cannot know how
  /// many of them reached the destination (an interrupted write to a pipe may have written part of them).
  bool flushing() const { return __atomic_load_n(&flushing_, __ATOMIC_RELAXED); }

 private:
  void reserve(size_t bytes);

  char* buffer_;
  size_t capacity_;
  size_t size_ = 0;
  Sink sink_;
  bool failed_ = false;
  uint64_t flushed_bytes_ = 0;
  OpenSection open_section_ = OpenSection::kNone;
  OpenSection flushed_open_section_ = OpenSection::kNone;
  bool flushed_mid_line_ = false;
  bool flushing_ = false;
};

/// Why a unit cannot be reported, or nullptr if it is well formed: ABI version, signature (32 lower-case hex
/// digits), scheme descriptions (name, columns, value storage, bound types).
const char* check_unit(const sampler_unit& unit);

/// Writes one scheme's samples section, then its timestamps sections ("first", then "last") if it has them.
void write_scheme(ReportWriter& out, const char* signature, const sampler_scheme& scheme);
/// Writes every scheme of a (checked) unit, in table order.
void write_unit(ReportWriter& out, const sampler_unit& unit);

}  // namespace sampler::runtime
