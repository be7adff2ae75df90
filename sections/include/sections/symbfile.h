// Reading symbfiles (symbfile format; docs/formats.md, "symbfile"): the "ranges" and "returnpads" files that
// `sampler-symbols gsym --symbfile` and `sampler-symbols push` write, as the collector receives them.
//
// A symbfile is the magic "symbfile", then messages each prefixed by two protobuf varints, its length and its
// type (1 header, 2 RangeV1, 3 ReturnPadV1, 4 StringTableV1), with the field numbers of the format authors'
// symbfile.proto. Unlike GSYM, a symbfile has no index: it is parsed whole once (the collector validates an upload
// this way; symbolization keeps the parsed form) into sorted tables. Every length is checked against the bytes
// left; a malformed file is an error naming the byte offset, never a crash, and memory stays proportional to the
// input (no size read from the input is allocated before the bytes it describes are seen).
//
// Lookups answer with gsym::Location frames (innermost first, the concrete function last), so that a symbolizer
// treats GSYM and symbfile answers alike:
//   return pads  the pad at exactly the address (the instruction following a call, minus one), its whole chain
//   ranges       every range holding the address, deepest first; a frame's line comes from its line table
//                (innermost) or from the call line of the range one deeper
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sections/gsym.h"

namespace sampler::symbfile {

/// Which records a file holds (the API path it is uploaded to).
enum class Kind { kRanges, kReturnPads };

/// Protobuf message types (symbfile.proto, MessageType).
enum class MessageType : uint32_t { kHeader = 1, kRangeV1 = 2, kReturnPadV1 = 3, kStringTableV1 = 4 };

/// What a symbfile starts with.
inline constexpr std::string_view kMagic = "symbfile";

/// Field numbers of symbfile.proto's messages, for this reader and for the writer in symbols/.
namespace field {
inline constexpr uint32_t kRangeLength = 2, kRangeFuncStr = 3, kRangeFileStr = 4, kRangeCallLine = 5,
                          kRangeCallFileStr = 6, kRangeDepth = 7, kRangeLineTable = 8, kRangeSetElfVa = 12;
inline constexpr uint32_t kLineTableOffset = 1, kLineTableLineNumber = 2;
inline constexpr uint32_t kPadFunc = 2, kPadFile = 3, kPadLine = 4, kPadSetElfVa = 5;
inline constexpr uint32_t kStringTableStrings = 1;
}  // namespace field

/// The most frames one return pad may hold, like GSYM's inline depth limit.
constexpr size_t kMaxPadFrames = gsym::kMaxInlineDepth + 1;

/// A parsed symbfile: owns copies of its strings, so the input bytes may go away.
class File {
 public:
  /// Parses `bytes` as a file of `kind` (a RangeV1 in a returnpads file, or the reverse, is an error). nullopt and
  /// `error` (byte offset and what is wrong) when malformed.
  static std::optional<File> parse(std::string_view bytes, Kind kind, gsym::Error& error);

  /// Return pads: the chain recorded for exactly `address`. False if there is none.
  bool lookup_pad(uint64_t address, gsym::LookupResult& result) const;
  /// Ranges: the chain of the ranges holding `address`. False if no depth-0 range holds it.
  bool lookup_ranges(uint64_t address, gsym::LookupResult& result) const;

  size_t range_count() const { return ranges_.size(); }
  size_t pad_count() const { return pads_.size(); }
  Kind kind() const { return kind_; }

 private:
  struct Range {
    uint64_t start = 0, length = 0;
    uint32_t func = 0, file = 0, call_file = 0;  // into strings_
    uint32_t call_line = 0, depth = 0;
    uint32_t rows_begin = 0, rows_end = 0;  // into rows_
  };
  struct Row {
    uint64_t address;
    uint32_t line;
  };
  struct Pad {
    uint64_t address;
    uint32_t frames_begin, frames_end;  // into pad_frames_, outermost first as stored
  };
  struct PadFrame {
    uint32_t func, file, line;  // func and file into strings_
  };
  struct Path {
    std::string_view dir, file;
  };
  Path path(uint32_t index) const;

  Kind kind_ = Kind::kRanges;
  std::vector<std::string> strings_;   // [0] is ""
  std::vector<Range> ranges_;          // by (start, depth)
  std::vector<uint32_t> functions_;    // indices of the depth-0 ranges, by start
  std::vector<Row> rows_;
  std::vector<Pad> pads_;              // by address
  std::vector<PadFrame> pad_frames_;
};

}  // namespace sampler::symbfile
