// Allocation-free text building (see sections/core/char_buffer.h). Async-signal-safe: no libc calls.
#include "sections/core/char_buffer.h"

namespace sampler {

void CharBuffer::append(const char* text, size_t length) {
  for (size_t i = 0; i < length; ++i) append(text[i]);
}

void CharBuffer::append(const char* c_string) {
  while (*c_string != '\0') append(*c_string++);
}

void CharBuffer::append(char c) {
  if (size_ < capacity_) {
    data_[size_++] = c;
  } else {
    overflowed_ = true;
  }
}

void CharBuffer::append_decimal(uint64_t value) {
  char digits[20];
  size_t length = format_decimal(value, digits, sizeof digits);
  append(digits, length);
}

void CharBuffer::append_signed_decimal(int64_t value) {
  if (value < 0) {
    append('-');
    // Negate in unsigned arithmetic so INT64_MIN does not overflow.
    append_decimal(0 - static_cast<uint64_t>(value));
  } else {
    append_decimal(static_cast<uint64_t>(value));
  }
}

void CharBuffer::append_hex(uint64_t value, unsigned min_digits) {
  char digits[16];
  size_t length = format_hex(value, min_digits > 16 ? 16 : min_digits, digits, sizeof digits);
  append(digits, length);
}

size_t format_decimal(uint64_t value, char* out, size_t capacity) {
  char reversed[20];
  size_t length = 0;
  do {
    reversed[length++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  if (length > capacity) return 0;
  for (size_t i = 0; i < length; ++i) out[i] = reversed[length - 1 - i];
  return length;
}

size_t format_hex(uint64_t value, unsigned min_digits, char* out, size_t capacity) {
  size_t length = 1;
  while (length < 16 && (value >> (4 * length)) != 0) ++length;
  if (length < min_digits) length = min_digits;
  if (length > capacity) return 0;
  for (size_t i = 0; i < length; ++i) {
    unsigned shift = static_cast<unsigned>(4 * (length - 1 - i));
    out[i] = shift < 64 ? kHexDigits[(value >> shift) & 0xf] : '0';
  }
  return length;
}

}  // namespace sampler
