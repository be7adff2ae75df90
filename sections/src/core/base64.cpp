// Base64 (RFC 4648 section 4) encoder and strict decoder (see sections/core/base64.h).
// Core code: no C++ standard library, no libc call, no allocation; safe in the runtime's crash handler.
#include "sections/core/base64.h"

namespace sampler::base64 {
namespace {

const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The 6-bit value of an alphabet character, or -1 (not in the RFC 4648 section 4 alphabet; '=' included).
int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

DecodeResult failure(size_t offset, const char* message) { return DecodeResult{false, 0, offset, message}; }

}  // namespace

size_t encode(const uint8_t* data, size_t length, char* out, size_t capacity) {
  // Counted in groups so that an absurd length cannot wrap around the way encoded_size() would.
  size_t groups = length / 3 + (length % 3 != 0 ? 1 : 0);
  if (groups > capacity / 4) return 0;
  size_t written = 0;
  size_t i = 0;
  for (; i + 3 <= length; i += 3) {
    uint32_t group = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8) | data[i + 2];
    out[written++] = kAlphabet[(group >> 18) & 63];
    out[written++] = kAlphabet[(group >> 12) & 63];
    out[written++] = kAlphabet[(group >> 6) & 63];
    out[written++] = kAlphabet[group & 63];
  }
  size_t rest = length - i;
  if (rest != 0) {
    // RFC 4648 section 4: a final group of 1 or 2 bytes is padded with zero bits and '=' characters.
    uint32_t group = uint32_t{data[i]} << 16;
    if (rest == 2) group |= uint32_t{data[i + 1]} << 8;
    out[written++] = kAlphabet[(group >> 18) & 63];
    out[written++] = kAlphabet[(group >> 12) & 63];
    out[written++] = rest == 2 ? kAlphabet[(group >> 6) & 63] : '=';
    out[written++] = '=';
  }
  return written;
}

DecodeResult decode(const char* text, size_t length, uint8_t* out, size_t capacity) {
  size_t written = 0;
  for (size_t start = 0; start < length; start += 4) {
    // Validate the characters of this quantum first, so an invalid character is reported where it is even
    // in a final incomplete quantum.
    size_t available = length - start < 4 ? length - start : 4;
    uint32_t group = 0;
    size_t data_characters = 0;
    for (size_t k = 0; k < available; ++k) {
      char c = text[start + k];
      if (c == '=') {
        // Padding (RFC 4648 section 3.2): only in the last two positions of the last quantum, "==" or "x=".
        if (k < 2) return failure(start + k, "misplaced '=' padding");
        if (k == 2 && available == 4 && text[start + 3] != '=') return failure(start + 3, "misplaced '=' padding");
        break;
      }
      int value = value_of(c);
      if (value < 0) return failure(start + k, "invalid base64 character");
      group |= static_cast<uint32_t>(value) << (18 - 6 * k);
      ++data_characters;
    }
    if (available < 4) return failure(length, "base64 text ends inside a 4-character group");
    bool padded = data_characters < 4;
    if (padded && start + 4 < length) return failure(start + 4, "base64 data after '=' padding");
    // Canonical encoding (RFC 4648 section 3.5): the bits below the last full byte must be zero.
    size_t bytes = data_characters == 4 ? 3 : data_characters - 1;
    uint32_t unused_mask = bytes == 3 ? 0 : (bytes == 2 ? 0xffu : 0xffffu);
    if ((group & unused_mask) != 0) {
      return failure(start + data_characters - 1, "non-canonical base64: unused bits are not zero");
    }
    if (bytes > capacity - written) return failure(start, "base64 output buffer too small");
    out[written++] = static_cast<uint8_t>(group >> 16);
    if (bytes >= 2) out[written++] = static_cast<uint8_t>(group >> 8);
    if (bytes >= 3) out[written++] = static_cast<uint8_t>(group);
  }
  return DecodeResult{true, written, 0, nullptr};
}

}  // namespace sampler::base64
