// Bounds-checked primitives for reading untrusted binary input (private to the formats library).
//
// Every read of a file's bytes goes through these: additions and multiplications that report overflow instead of
// wrapping, a strict sub-range that fails instead of clamping, and fixed-width integer reads in a stated byte
// order. A parser then is a plain sequence of checked calls, each of which can only fail, never read out of range.
// Numbers written as text (decimal and hexadecimal digits) are parsed here too, in one place.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>

namespace sampler::checked {

/// a + b, or nullopt if it does not fit in T.
template <typename T>
constexpr std::optional<T> add(T a, T b) {
  T result;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

/// a * b, or nullopt if it does not fit in T.
template <typename T>
constexpr std::optional<T> mul(T a, T b) {
  T result;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

/// The outcome of parse_digits().
struct Digits {
  enum class Status { kOk, kEmpty, kBadDigit, kOverflow };
  Status status = Status::kEmpty;
  uint64_t value = 0;
  size_t offset = 0;  ///< kBadDigit: the offending character's offset in the text
};

/// The one parser of unsigned numbers in the formats library: `text` must be one or more digits of `base` (2, 8,
/// 10 or 16; hex digits of either case), no sign, no prefix, no spaces, and its value must fit in 64 bits
/// (leading zeros are fine). std::from_chars does the work.
inline Digits parse_digits(std::string_view text, int base) {
  Digits result;
  if (text.empty()) return result;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, result.value, base);
  if (error == std::errc::result_out_of_range) {
    // A bad digit after too many good ones is still a bad digit.
    result.status = stop == end ? Digits::Status::kOverflow : Digits::Status::kBadDigit;
    result.offset = static_cast<size_t>(stop - text.data());
    return result;
  }
  if (error != std::errc() || stop != end) {
    result.status = Digits::Status::kBadDigit;
    result.offset = error != std::errc() ? 0 : static_cast<size_t>(stop - text.data());
    return result;
  }
  result.status = Digits::Status::kOk;
  return result;
}

/// An unsigned decimal number of 1-20 digits that fits in 64 bits, or nullopt (no sign, no spaces).
inline std::optional<uint64_t> parse_decimal(std::string_view text) {
  if (text.size() > 20) return std::nullopt;
  Digits digits = parse_digits(text, 10);
  if (digits.status != Digits::Status::kOk) return std::nullopt;
  return digits.value;
}

/// One or more hexadecimal digits of either case (no "0x"), any number of them, whose value fits in 64 bits; or
/// nullopt.
inline std::optional<uint64_t> parse_hex(std::string_view text) {
  Digits digits = parse_digits(text, 16);
  if (digits.status != Digits::Status::kOk) return std::nullopt;
  return digits.value;
}

/// True if [offset, offset + size) lies within a buffer of `total` bytes (no overflow possible).
constexpr bool range_fits(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

/// data[offset, offset + size) or nullopt if that range is not entirely inside `data` (never clamps).
inline std::optional<std::string_view> substr(std::string_view data, uint64_t offset, uint64_t size) {
  if (!range_fits(offset, size, data.size())) return std::nullopt;
  return data.substr(static_cast<size_t>(offset), static_cast<size_t>(size));
}

enum class ByteOrder { kLittle, kBig };

/// Reads an unsigned integer of sizeof(T) bytes at `offset` in `order`; nullopt if it does not fit in `data`.
template <typename T>
std::optional<T> read_uint(std::string_view data, uint64_t offset, ByteOrder order) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
  if (!range_fits(offset, sizeof(T), data.size())) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data()) + offset;
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    const size_t shift = order == ByteOrder::kLittle ? 8 * i : 8 * (sizeof(T) - 1 - i);
    value = static_cast<T>(value | static_cast<T>(static_cast<T>(p[i]) << shift));
  }
  return value;
}

/// A cursor over a buffer: each read advances on success and leaves the position unchanged on failure.
class Reader {
 public:
  Reader(std::string_view data, ByteOrder order) : data_(data), order_(order) {}

  template <typename T>
  std::optional<T> read() {
    auto value = read_uint<T>(data_, position_, order_);
    if (value) position_ += sizeof(T);
    return value;
  }
  /// The next `size` bytes, or nullopt if fewer remain.
  std::optional<std::string_view> bytes(uint64_t size) {
    auto view = substr(data_, position_, size);
    if (view) position_ += view->size();
    return view;
  }
  /// Skips `size` bytes; false (position unchanged) if fewer remain.
  bool skip(uint64_t size) { return bytes(size).has_value(); }

  uint64_t position() const { return position_; }
  uint64_t remaining() const { return data_.size() - position_; }
  std::string_view rest() const { return data_.substr(position_); }

 private:
  std::string_view data_;
  ByteOrder order_;
  uint64_t position_ = 0;
};

}  // namespace sampler::checked
