// Base64 for the tools and tests: std::string / std::vector conveniences over the allocation-free core codec
// (sections/core/base64.h, RFC 4648 section 4, strict decoding). The runtime uses the core directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sections/core/base64.h"

namespace sampler::base64 {

/// The result of decode_to_vector(): the bytes, or where and why the text is not canonical base64.
struct DecodedBytes {
  bool ok = true;
  std::vector<uint8_t> bytes;  ///< the decoded data when ok; empty otherwise
  size_t error_offset = 0;     ///< !ok: 0-based offset in the text of the offending character
  std::string error;           ///< !ok: English message, e.g. "invalid base64 character"
};

/// Decodes `text` strictly (see base64::decode). Memory is bounded by the text's size (3/4 of it).
DecodedBytes decode_to_vector(std::string_view text);

/// Encodes `data` with padding.
std::string encode_to_string(std::span<const uint8_t> data);

/// base64url (RFC 4648 section 5) without padding, as the symbfile upload API's FileID header spells it; the decoder
/// also takes the standard alphabet and padding (both map onto one alphabet).
DecodedBytes decode_url_to_vector(std::string_view text);
std::string encode_to_url_string(std::span<const uint8_t> data);

}  // namespace sampler::base64
