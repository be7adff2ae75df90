// Hexadecimal both ways: bytes as lower-case digits (build IDs, digests, unit signatures), and a digit's value.
// One implementation for every part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sections/core/char_buffer.h"  // kHexDigits

namespace sampler {

/// Each byte as two lower-case hexadecimal digits.
inline std::string hex_bytes(std::string_view bytes) {
  std::string out;
  out.reserve(2 * bytes.size());
  for (unsigned char c : bytes) {
    out += kHexDigits[c >> 4];
    out += kHexDigits[c & 15];
  }
  return out;
}

inline std::string hex_bytes(const void* data, size_t size) {
  return hex_bytes(std::string_view(static_cast<const char*>(data), size));
}

inline std::string hex_bytes(const std::vector<uint8_t>& bytes) { return hex_bytes(bytes.data(), bytes.size()); }

/// The value of one hexadecimal digit of either case, or -1.
constexpr int hex_digit_value(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

}  // namespace sampler
