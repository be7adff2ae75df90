// Base64 (RFC 4648 section 4: standard alphabet, '=' padding), allocation-free.
//
// Part of the formats library's core (no C++ standard library, async-signal-safe): the runtime encodes the
// crash stack's CBF bytes with it for the `cbf:` line of a main-backtrace subreport (docs/formats.md section 3).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace sampler::base64 {

/// Characters needed to encode `length` bytes (with padding).
constexpr size_t encoded_size(size_t length) { return (length + 2) / 3 * 4; }
/// Upper bound on the bytes decoded from `length` characters.
constexpr size_t max_decoded_size(size_t length) { return length / 4 * 3 + 3; }

/// Encodes `length` bytes into out. Returns the number of characters written, or 0 (nothing usable written)
/// if capacity < encoded_size(length). Does not NUL-terminate.
size_t encode(const uint8_t* data, size_t length, char* out, size_t capacity);

struct DecodeResult {
  bool ok;              ///< false: malformed input or capacity too small
  size_t size;          ///< bytes written to out (when ok)
  size_t error_offset;  ///< offset in the input of the offending character (when !ok)
  const char* error;    ///< static English message (when !ok)
};

/// Strict decoder: the input length must be a multiple of 4, padding only at the end, no whitespace, and
/// the unused bits of the last quantum must be zero (RFC 4648 section 3.5 canonical encoding).
DecodeResult decode(const char* text, size_t length, uint8_t* out, size_t capacity);

}  // namespace sampler::base64
