// Allocation-free text building into a caller's fixed buffer.
//
// Part of the formats library's core: used by the runtime's crash handler, so it includes no C++ standard
// library header, allocates nothing, never throws, and is async-signal-safe.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace sampler {

/// Appends text to a fixed buffer that the caller owns. When the buffer is full, further appends are dropped
/// and overflowed() becomes true; size() never exceeds capacity. Never NUL-terminates.
class CharBuffer {
 public:
  CharBuffer(char* data, size_t capacity) : data_(data), capacity_(capacity) {}

  void append(const char* text, size_t length);
  void append(const char* c_string);  ///< NUL-terminated
  void append(char c);
  void append_decimal(uint64_t value);
  void append_signed_decimal(int64_t value);
  /// Lower-case hexadecimal without prefix, at least min_digits digits (zero padded).
  void append_hex(uint64_t value, unsigned min_digits = 1);

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool overflowed() const { return overflowed_; }
  void clear() { size_ = 0; overflowed_ = false; }

 private:
  char* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool overflowed_ = false;
};

/// The digits of lower-case hexadecimal: the one table every part uses.
inline constexpr char kHexDigits[] = "0123456789abcdef";

/// Writes value in decimal to out; returns the number of characters, or 0 if capacity is too small.
size_t format_decimal(uint64_t value, char* out, size_t capacity);
/// Writes value in lower-case hexadecimal (no prefix, at least min_digits digits); returns length or 0.
size_t format_hex(uint64_t value, unsigned min_digits, char* out, size_t capacity);

}  // namespace sampler
