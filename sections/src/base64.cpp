// Base64 conveniences over the core codec (see sections/base64.h).
#include "sections/base64.h"

namespace sampler::base64 {

DecodedBytes decode_to_vector(std::string_view text) {
  DecodedBytes result;
  result.bytes.resize(max_decoded_size(text.size()));
  DecodeResult r = decode(text.data(), text.size(), result.bytes.data(), result.bytes.size());
  if (!r.ok) {
    result.ok = false;
    result.bytes.clear();
    result.error_offset = r.error_offset;
    result.error = r.error;
    return result;
  }
  result.bytes.resize(r.size);
  return result;
}

std::string encode_to_string(std::span<const uint8_t> data) {
  std::string text(encoded_size(data.size()), '\0');
  size_t n = encode(data.data(), data.size(), text.data(), text.size());
  text.resize(n);
  return text;
}

}  // namespace sampler::base64
