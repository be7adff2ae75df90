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

DecodedBytes decode_url_to_vector(std::string_view text) {
  std::string standard(text);
  for (char& c : standard) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (standard.size() % 4 != 0) standard += '=';
  DecodedBytes result = decode_to_vector(standard);
  if (!result.ok && result.error_offset >= text.size()) result.error = "base64 cut short";
  return result;
}

std::string encode_to_url_string(std::span<const uint8_t> data) {
  std::string text = encode_to_string(data);
  while (!text.empty() && text.back() == '=') text.pop_back();
  for (char& c : text) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return text;
}

}  // namespace sampler::base64
