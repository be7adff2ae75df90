// Compact Backtrace Format (CBF), version 0: encoder and decoder, allocation-free.
//
// Specified by Swift's Compact Backtrace Format (CompactBacktraceFormat.md), with docs/formats.md 3.2's choices:
//  - address bytes are stored most significant first; the first byte's top bit is sign-extended to the
//    word width (so a relative 0xff is -1 and an absolute 0xff on 32 bits is 0xffffffff);
//  - the encoder picks per frame whichever of absolute or delta (two's complement, wrapping at the word width)
//    needs fewer bytes (absolute when equal); runs of the same frame (kind and address) become `rep`;
//  - `omit` and `rep` external counts are most significant first, zero-extended;
//  - the stream ends with `trunc` when the capture limit was hit, otherwise `end`.
// Part of the formats library's core: no C++ standard library, never allocates, async-signal-safe, used by the
// runtime's crash handler. The decoder never reads past its buffer and always terminates.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace sampler::cbf {

/// The `size` field of the information byte.
enum class WordSize : uint8_t { k16 = 0, k32 = 1, k64 = 2 };

constexpr unsigned word_bytes(WordSize size) { return 2u << static_cast<unsigned>(size); }

/// The frame instructions; the values are the opcodes' top nibble.
enum class FrameKind : uint8_t { kPc = 1, kRa = 2, kAsync = 3 };

struct Frame {
  FrameKind kind;
  uint64_t address;  ///< truncated to the word width by the encoder
};

/// Worst-case encoded size of `frames` frame instructions plus `omits` omit instructions, the information
/// byte and the final end/trunc: 1 + frames * (1 + word) + omits * (1 + word) + 1.
constexpr size_t max_encoded_size(WordSize size, size_t frames, size_t omits = 0) {
  return 2 + (frames + omits) * (1 + word_bytes(size));
}

/// Streaming encoder into a caller's buffer. Usage: construct, call frame()/omit() in stack order, finish().
class Encoder {
 public:
  /// Writes the information byte (version 0, `size`).
  Encoder(WordSize size, uint8_t* out, size_t capacity);

  /// Appends a frame; a frame equal to the previous one (same kind and address) extends a pending `rep`.
  void frame(FrameKind kind, uint64_t address);
  /// Appends `omit count` (count >= 1; 0 is ignored): inline when count <= 32, else external bytes.
  void omit(uint64_t count);
  /// Flushes any pending `rep`, writes `trunc` if truncated else `end`. Returns the total size in bytes, or 0
  /// if the buffer overflowed at any point (the buffer's content is then unusable).
  size_t finish(bool truncated);

  bool overflowed() const { return overflowed_; }

 private:
  void put(uint8_t byte);
  void flush_repeat();
  /// Writes one omit/rep instruction for 1 <= count <= the word's maximum: inline when count <= inline_limit,
  /// else `external_opcode | (bytes - 1)` followed by the minimal big-endian count bytes.
  void put_count(uint8_t inline_opcode, uint64_t inline_limit, uint8_t external_opcode, uint64_t count);
  /// Writes `count` (>= 1, any size) as a sequence of such instructions, each at most the word's maximum.
  void put_counts(uint8_t inline_opcode, uint64_t inline_limit, uint8_t external_opcode, uint64_t count);

  WordSize size_;
  uint8_t* out_;
  size_t capacity_;
  size_t length_ = 0;
  bool overflowed_ = false;
  bool have_previous_ = false;  ///< previous_ may be repeated (the last instruction was a frame or its rep)
  bool have_address_ = false;   ///< previous_.address is a base for deltas (some frame was written)
  Frame previous_{FrameKind::kPc, 0};
  uint64_t pending_repeats_ = 0;
};

/// Convenience: encodes frames[0..count) and the terminator; returns the size or 0 on overflow.
size_t encode(WordSize size, const Frame* frames, size_t count, bool truncated, uint8_t* out, size_t capacity);

enum class ItemType : uint8_t {
  kFrame,       ///< frame is set
  kOmit,        ///< count frames were omitted
  kRepeat,      ///< the previous frame is repeated count more times
  kEnd,         ///< `end` instruction
  kTruncated,   ///< `trunc` instruction
  kEndOfData,   ///< the buffer ended without end/trunc (allowed: the length is known)
  kError,       ///< malformed input at offset; error says why
};

struct Item {
  ItemType type;
  Frame frame;         ///< kFrame; kRepeat: the frame being repeated
  uint64_t count;      ///< kOmit, kRepeat
  size_t offset;       ///< byte offset of the instruction (kError: of the offending byte)
  const char* error;   ///< kError: static English message
};

/// Cursor over an encoded buffer. Once it returned kEnd, kTruncated, kEndOfData or kError, every further
/// next() returns the same item. Errors: empty buffer, version != 0, reserved size, reserved opcode, a
/// relative address before any absolute one, `rep` before any frame, an address or count that runs past the
/// buffer, an address or count wider than the word. Errors are at the offset of the information byte or of the
/// offending instruction's opcode. Bytes after `end`/`trunc` are ignored.
class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size);

  /// The word size from the information byte (valid unless the first next() is an error about it).
  WordSize word_size() const { return size_; }
  Item next();

 private:
  const uint8_t* data_;
  size_t size_bytes_;
  size_t position_ = 0;
  WordSize size_ = WordSize::k64;
  bool have_address_ = false;
  bool have_frame_ = false;
  uint64_t address_ = 0;
  FrameKind last_kind_ = FrameKind::kPc;  ///< kind of the last frame, for `rep` items
  Item final_{};
  bool finished_ = false;
};

}  // namespace sampler::cbf
