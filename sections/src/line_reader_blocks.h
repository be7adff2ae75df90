// Bulk access to a LineReader's buffer (private to the formats library).
//
// extract_subreports copies megabytes of body lines: going through next() one line at a time would cost a
// call per line. A block is a run of whole lines (each ending in "\n", except the input's last line) that
// the reader holds in memory; the scanner processes it and then consumes all of it at once.
#pragma once

#include <cstdint>
#include <string_view>

#include "sections/line_reader.h"

namespace sampler {

struct LineReaderBlocks {
  /// The unread whole lines in the reader's buffer (at least one), reading more if needed; too-long lines are
  /// reported and skipped as next() does. False at the end of input. Valid until consume().
  static bool next(LineReader& reader, std::string_view& block) { return reader.next_block(block); }
  /// Marks `bytes` bytes (whole lines, `lines` of them) of the current block as read.
  static void consume(LineReader& reader, size_t bytes, uint64_t lines) { reader.consume_block(bytes, lines); }
};

}  // namespace sampler
