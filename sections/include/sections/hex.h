// Bytes as lower-case hexadecimal (build IDs, digests, unit signatures): one implementation for every part.
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

}  // namespace sampler
