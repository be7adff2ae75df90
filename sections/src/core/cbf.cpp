// Compact Backtrace Format version 0: encoder and decoder (see sections/core/cbf.h, Swift's Compact Backtrace Format
// and docs/formats.md section 3.2). Core code: no C++ standard library, no libc call, no allocation; every loop is
// bounded by the word size or by the buffer, so it is safe in the runtime's crash handler and on hostile input.
#include "sections/core/cbf.h"

namespace sampler::cbf {
namespace {

// Opcodes (Compact Backtrace Format, "Instructions").
constexpr uint8_t kEnd = 0x00;
constexpr uint8_t kTrunc = 0x01;
constexpr uint8_t kAbsoluteBit = 0x08;  // the `a` bit of pc/ra/async
constexpr uint8_t kOmit = 0x40;
constexpr uint8_t kOmitExternal = 0x60;  // omit with x = 1
constexpr uint8_t kRep = 0x80;
constexpr uint8_t kRepExternal = 0x88;   // rep with x = 1
constexpr uint64_t kOmitInlineLimit = 32;  // 5-bit count field, meaning count + 1
constexpr uint64_t kRepInlineLimit = 8;    // 3-bit count field, meaning count + 1

bool valid_size(WordSize size) { return static_cast<unsigned>(size) <= static_cast<unsigned>(WordSize::k64); }

/// All ones over the word width.
uint64_t word_mask(unsigned bytes) { return bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1; }

/// The low `bytes` bytes of `value` with the top one's high bit sign-extended to 64 bits (Compact Backtrace Format,
/// "pc, ra, async": address values are sign-extended).
uint64_t sign_extend(uint64_t value, unsigned bytes) {
  if (bytes >= 8) return value;
  uint64_t low = value & word_mask(bytes);
  bool negative = ((low >> (8 * bytes - 1)) & 1) != 0;
  return negative ? (low | ~word_mask(bytes)) : low;
}

/// Fewest bytes whose sign extension to the word reproduces `value` (already masked to the word).
unsigned signed_length(uint64_t value, unsigned word) {
  uint64_t mask = word_mask(word);
  for (unsigned n = 1; n < word; ++n) {
    if ((sign_extend(value, n) & mask) == value) return n;
  }
  return word;
}

/// Fewest bytes (at least one) that hold `value` zero-extended.
unsigned unsigned_length(uint64_t value) {
  unsigned n = 1;
  while (n < 8 && (value >> (8 * n)) != 0) ++n;
  return n;
}

Item make_item(ItemType type, size_t offset) {
  Item item{};
  item.type = type;
  item.frame = Frame{FrameKind::kPc, 0};
  item.offset = offset;
  return item;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------- Encoder

Encoder::Encoder(WordSize size, uint8_t* out, size_t capacity) : size_(size), out_(out), capacity_(capacity) {
  // An invalid size cannot be encoded (11 is reserved); the result is then unusable, like an overflow.
  if (!valid_size(size)) {
    overflowed_ = true;
    return;
  }
  put(static_cast<uint8_t>(static_cast<unsigned>(size)));  // version 0 in the top six bits
}

void Encoder::put(uint8_t byte) {
  if (length_ < capacity_) {
    out_[length_++] = byte;
  } else {
    overflowed_ = true;
  }
}

void Encoder::put_count(uint8_t inline_opcode, uint64_t inline_limit, uint8_t external_opcode, uint64_t count) {
  if (count <= inline_limit) {
    put(static_cast<uint8_t>(inline_opcode | (count - 1)));
    return;
  }
  // External counts are most significant byte first, zero-extended (docs/formats.md section 3.2).
  unsigned bytes = unsigned_length(count);
  put(static_cast<uint8_t>(external_opcode | (bytes - 1)));
  for (unsigned i = bytes; i > 0; --i) put(static_cast<uint8_t>(count >> (8 * (i - 1))));
}

void Encoder::put_counts(uint8_t inline_opcode, uint64_t inline_limit, uint8_t external_opcode, uint64_t count) {
  // A count wider than the word cannot be stored in one instruction (Compact Backtrace Format: "up to the machine word
  // length"); split it. Every instruction writes at least one byte, so the loop ends once the buffer is full.
  uint64_t largest = word_mask(word_bytes(size_));
  while (count != 0 && !overflowed_) {
    uint64_t part = count < largest ? count : largest;
    put_count(inline_opcode, inline_limit, external_opcode, part);
    count -= part;
  }
}

void Encoder::flush_repeat() {
  if (pending_repeats_ == 0) return;
  put_counts(kRep, kRepInlineLimit, kRepExternal, pending_repeats_);
  pending_repeats_ = 0;
}

void Encoder::frame(FrameKind kind, uint64_t address) {
  if (overflowed_) return;
  unsigned word = word_bytes(size_);
  uint64_t mask = word_mask(word);
  address &= mask;
  uint8_t kind_bits = static_cast<uint8_t>(kind);
  if (kind_bits < 1 || kind_bits > 3) kind_bits = static_cast<uint8_t>(FrameKind::kPc);
  FrameKind normal_kind = static_cast<FrameKind>(kind_bits);

  // A run of the same frame becomes one `rep` (docs/formats.md section 3.2).
  if (have_previous_ && previous_.kind == normal_kind && previous_.address == address) {
    ++pending_repeats_;
    return;
  }
  flush_repeat();

  // Absolute or delta from the previous computed address, whichever is shorter; absolute on a tie and for the
  // first frame (Compact Backtrace Format: the first address must be absolute).
  unsigned absolute_length = signed_length(address, word);
  bool relative = false;
  uint64_t value = address;
  unsigned length = absolute_length;
  if (have_address_) {
    uint64_t delta = (address - previous_.address) & mask;  // wraps at the word width
    unsigned delta_length = signed_length(delta, word);
    if (delta_length < absolute_length) {
      relative = true;
      value = delta;
      length = delta_length;
    }
  }
  put(static_cast<uint8_t>((kind_bits << 4) | (relative ? 0 : kAbsoluteBit) | (length - 1)));
  // Address bytes most significant first (docs/formats.md section 3.2).
  for (unsigned i = length; i > 0; --i) put(static_cast<uint8_t>(value >> (8 * (i - 1))));

  previous_ = Frame{normal_kind, address};
  have_previous_ = true;
  have_address_ = true;
}

void Encoder::omit(uint64_t count) {
  if (overflowed_ || count == 0) return;
  flush_repeat();
  put_counts(kOmit, kOmitInlineLimit, kOmitExternal, count);
  // `rep` repeats the previous frame; after an omit the encoder does not rely on what that means, it writes the
  // frame again. The address stays the base for the next delta (omit computes no address).
  have_previous_ = false;
}

size_t Encoder::finish(bool truncated) {
  if (!overflowed_) flush_repeat();
  put(truncated ? kTrunc : kEnd);
  return overflowed_ ? 0 : length_;
}

size_t encode(WordSize size, const Frame* frames, size_t count, bool truncated, uint8_t* out, size_t capacity) {
  Encoder encoder(size, out, capacity);
  for (size_t i = 0; i < count && !encoder.overflowed(); ++i) encoder.frame(frames[i].kind, frames[i].address);
  return encoder.finish(truncated);
}

// ---------------------------------------------------------------------------------------------------- Decoder

Decoder::Decoder(const uint8_t* data, size_t size) : data_(data), size_bytes_(size) {}

Item Decoder::next() {
  if (finished_) return final_;
  // Every return below that ends the stream goes through here, so later calls repeat it.
  auto finish = [this](Item item) {
    final_ = item;
    finished_ = true;
    return item;
  };
  auto error = [&finish](size_t offset, const char* message) {
    Item item = make_item(ItemType::kError, offset);
    item.error = message;
    return finish(item);
  };

  if (position_ == 0) {
    // The information byte (CBF, "General Format"): version in the top six bits, size in the low two.
    if (size_bytes_ == 0) return error(0, "empty CBF data");
    uint8_t info = data_[0];
    if ((info >> 2) != 0) return error(0, "unsupported CBF version (only version 0 is known)");
    if ((info & 3) == 3) return error(0, "reserved CBF word size");
    size_ = static_cast<WordSize>(info & 3);
    position_ = 1;
  }
  // Known length: a stream without end/trunc is allowed (Compact Backtrace Format, "end/trunc").
  if (position_ >= size_bytes_) return finish(make_item(ItemType::kEndOfData, size_bytes_));

  const size_t offset = position_;
  const uint8_t opcode = data_[offset];
  const size_t available = size_bytes_ - offset - 1;  // bytes after the opcode
  const unsigned word = word_bytes(size_);
  const uint64_t mask = word_mask(word);

  if (opcode == kEnd) return finish(make_item(ItemType::kEnd, offset));
  if (opcode == kTrunc) return finish(make_item(ItemType::kTruncated, offset));
  if (opcode < 0x10) return error(offset, "reserved CBF opcode");

  if (opcode < 0x40) {
    // pc (0x1), ra (0x2), async (0x3): count + 1 address bytes follow.
    bool absolute = (opcode & kAbsoluteBit) != 0;
    unsigned length = (opcode & 7u) + 1;
    if (length > word) return error(offset, "CBF address wider than the word");
    if (length > available) return error(offset, "CBF address runs past the end of the data");
    if (!absolute && !have_address_) return error(offset, "first CBF address is relative");
    uint64_t value = 0;
    for (unsigned i = 0; i < length; ++i) value = (value << 8) | data_[offset + 1 + i];
    value = sign_extend(value, length) & mask;
    address_ = absolute ? value : ((address_ + value) & mask);
    have_address_ = true;
    have_frame_ = true;
    Item item = make_item(ItemType::kFrame, offset);
    item.frame = Frame{static_cast<FrameKind>(opcode >> 4), address_};
    last_kind_ = item.frame.kind;
    position_ = offset + 1 + length;
    return item;
  }

  const bool is_omit = opcode < 0x80;
  if (!is_omit && opcode >= 0x90) return error(offset, "reserved CBF opcode");
  if (!is_omit && !have_frame_) return error(offset, "CBF rep before any frame");
  // omit: 01 x count(5); rep: 1000 x count(3).
  const bool external = is_omit ? (opcode & 0x20) != 0 : (opcode & 0x08) != 0;
  const unsigned field = is_omit ? (opcode & 0x1fu) : (opcode & 0x07u);
  uint64_t count = 0;
  size_t length = 0;
  if (!external) {
    count = uint64_t{field} + 1;
  } else {
    length = field + 1;
    if (length > word) return error(offset, "CBF count wider than the word");
    if (length > available) return error(offset, "CBF count runs past the end of the data");
    for (size_t i = 0; i < length; ++i) count = (count << 8) | data_[offset + 1 + i];
  }
  Item item = make_item(is_omit ? ItemType::kOmit : ItemType::kRepeat, offset);
  item.count = count;
  if (!is_omit) item.frame = Frame{last_kind_, address_};
  position_ = offset + 1 + length;
  return item;
}

}  // namespace sampler::cbf
