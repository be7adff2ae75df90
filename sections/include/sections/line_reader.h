// Line-by-line input for reports: files, pipes or memory, plain or gzip, LF or CRLF.
//
// Reports come from the field (SPEC section 3): possibly gzip-compressed (detected by the magic bytes
// 1f 8b), with CRLF line ends, possibly cut short by a crash. The reader streams: memory use is bounded by the
// longest line, and a line longer than kMaxLineLength is reported as an error and skipped, never buffered.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"

namespace sampler {

class LineReader {
 public:
  /// Longest line kept; longer lines are reported (error with their line number) and skipped.
  static constexpr size_t kMaxLineLength = 64u << 20;

  /// Reads from `fd` (not closed by the reader); `name` appears in diagnostics ("<stdin>" for stdin).
  LineReader(int fd, std::string name, DiagnosticSink& sink);
  /// Reads from `data`, which must outlive the reader (tests, fuzzing).
  LineReader(std::string_view data, std::string name, DiagnosticSink& sink);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// Next line without its "\n" and without one trailing "\r". The view is valid until the next call.
  /// Returns false at the end of input, or after a read or decompression error (reported once to the sink).
  /// A last line without "\n" is still returned.
  bool next(std::string_view& line);

  /// 1-based number of the line last returned by next().
  uint64_t line_number() const { return line_number_; }
  const std::string& name() const { return name_; }
  DiagnosticSink& sink() const { return sink_; }
  /// True if a read or decompression error occurred (the lines before it were still returned).
  bool failed() const { return failed_; }

 private:
  class Source;  // plain fd, memory, or gzip over either
  std::unique_ptr<Source> source_;
  std::string name_;
  DiagnosticSink& sink_;
  uint64_t line_number_ = 0;
  bool failed_ = false;
  // buffer state lives in the implementation
  struct Buffer;
  std::unique_ptr<Buffer> buffer_;
};

}  // namespace sampler
