// Whole-buffer Compact Backtrace Format decoding for the tools and tests (Swift's Compact Backtrace Format,
// docs/formats.md section 3.2).
//
// A thin C++ layer over the allocation-free cursor in sections/core/cbf.h: it collects every instruction into a
// vector and says how the stream ended. Malformed data (docs/formats.md section 3.2: unknown opcode, reserved size,
// `rep` before any frame, a count or address past the word width or past the data, a relative first address) ends
// decoding with an error carrying the byte offset; the items decoded before it are kept. Memory is linear in
// the input: one item per instruction, and `rep`/`omit` counts are kept as counts, never expanded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sections/core/cbf.h"

namespace sampler::cbf {

/// Where and why decoding stopped early.
struct DecodeError {
  size_t offset = 0;     ///< 0-based offset of the offending byte (base64: of the offending character)
  std::string message;   ///< English, e.g. "CBF rep before any frame"
  bool in_base64 = false;  ///< the offset is into the base64 text (decode_stack_base64), not the CBF bytes
};

/// A decoded stack.
struct DecodedStack {
  WordSize word_size = WordSize::k64;  ///< from the information byte (k64 if it could not be read)
  /// kFrame, kOmit and kRepeat items in stream order (kRepeat items carry the repeated frame).
  std::vector<Item> items;
  /// How the stream ended: kEnd, kTruncated, kEndOfData (no end/trunc, allowed) or kError.
  ItemType status = ItemType::kEndOfData;
  /// Offset of the end/trunc instruction, the data size for kEndOfData, the error offset for kError.
  size_t status_offset = 0;
  std::optional<DecodeError> error;  ///< set exactly when status == kError

  bool ok() const { return status != ItemType::kError; }
  bool truncated() const { return status == ItemType::kTruncated; }
  /// Frames the stack stands for: frames plus repeats (omitted frames not counted); saturates at UINT64_MAX.
  uint64_t frame_count() const;
};

/// Decodes a whole CBF buffer. Never reads past it, always terminates.
DecodedStack decode_stack(std::span<const uint8_t> data);

/// Decodes the payload of a `cbf:` line (docs/formats.md section 3): base64 text, then CBF. A base64 error is reported
/// with in_base64 set and no items.
DecodedStack decode_stack_base64(std::string_view text);

/// "pc", "ra" or "async".
std::string_view frame_kind_name(FrameKind kind);

}  // namespace sampler::cbf
