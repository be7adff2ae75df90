// Line-by-line input for reports: files, pipes or memory, plain or gzip, LF or CRLF.
//
// Reports come from the field (docs/formats.md section 3): possibly gzip-compressed (detected by the magic bytes
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
  /// Longest line kept, counted in bytes before its "\n" (a "\r" before it counts); longer lines are reported
  /// (an error with their line number) and skipped without being buffered whole.
  static constexpr size_t kMaxLineLength = 64u << 20;
  /// Size of each read() from a descriptor, and of each piece of decompressed output.
  static constexpr size_t kDefaultReadSize = 1u << 20;

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

  /// 1-based number of the line last returned by next(). read_report(), read_samples() and
  /// extract_subreports() consume whole buffers at a time and update it only between them: their visitors
  /// use the line numbers they are given.
  uint64_t line_number() const { return line_number_; }
  const std::string& name() const { return name_; }
  DiagnosticSink& sink() const { return sink_; }
  /// True if a read or decompression error occurred (the lines before it were still returned).
  bool failed() const { return failed_; }
  /// Number of errors the reader itself reported so far (too-long lines, read or decompression errors).
  uint64_t error_count() const { return error_count_; }

  /// Lowers the line-length limit (at most kMaxLineLength) and the read size; call before the first next().
  /// Tests use small values to exercise buffer boundaries without megabytes of input.
  void set_limits(size_t max_line_length, size_t read_size);

 private:
  // Bulk access for the report scanner (src/line_reader_blocks.h): runs of whole lines at once.
  friend struct LineReaderBlocks;
  bool next_block(std::string_view& block);
  void consume_block(size_t bytes, uint64_t lines);

  class Source;  // where bytes come from: a descriptor, or gzip over a descriptor or memory
  struct Buffer;  // the window of unread bytes (src/line_reader.cpp)
  bool start();
  bool fill_more();
  bool ensure_line(size_t scanned);
  void skip_long_line();
  void fail(std::string message);

  std::unique_ptr<Source> source_;
  std::unique_ptr<Buffer> buffer_;
  std::string name_;
  DiagnosticSink& sink_;
  uint64_t line_number_ = 0;
  bool failed_ = false;
  uint64_t error_count_ = 0;
};

}  // namespace sampler
