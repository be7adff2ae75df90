// Bounds-checked primitives for reading untrusted binary input (private to the formats library).
//
// Every read of a file's bytes goes through these: additions and multiplications that report overflow instead of
// wrapping, a strict sub-range that fails instead of clamping, and fixed-width integer reads in a stated byte
// order. A parser then is a plain sequence of checked calls, each of which can only fail, never read out of range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

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

/// An unsigned decimal number of 1-20 digits that fits in 64 bits, or nullopt (no sign, no spaces).
inline std::optional<uint64_t> parse_decimal(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(value, 10u, &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(c - '0'), &value))
      return std::nullopt;
  }
  return value;
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
