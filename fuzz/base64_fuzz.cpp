// Fuzz target: base64 (RFC 4648 section 4), the allocation-free core codec (sections/core/base64.h) and the
// conveniences over it (sections/base64.h).
//
// Checked properties: the strict decoder accepts exactly the canonical encodings (compared with a reference:
// a lenient decoder whose result is encoded again and must give back the text), and what it accepts encodes
// back to the same text; encoding any bytes decodes back to them; the core decoder never writes past the
// capacity it is given (the output buffers are exactly that big, so AddressSanitizer sees any overflow) and
// reports a too-small buffer as an error; the encoder refuses a too-small buffer.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "sections/base64.h"

namespace sampler::fuzz {
namespace {

int value_of(char c) {
  static const std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const size_t at = alphabet.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

// Reference: the text is canonical base64 if it decodes leniently and encodes back to itself.
bool reference_is_canonical(std::string_view text) {
  if (text.size() % 4 != 0) return false;
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  std::vector<uint8_t> bytes;
  uint32_t bits = 0;
  int bit_count = 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    const int value = value_of(text[i]);
    if (value < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      bytes.push_back(static_cast<uint8_t>(bits >> bit_count));
      bits &= (1u << bit_count) - 1;
    }
  }
  return base64::encode_to_string(bytes) == text;
}

// The core decoder into a heap buffer of exactly `capacity` bytes.
base64::DecodeResult decode_into(std::string_view text, size_t capacity, std::vector<uint8_t>& bytes) {
  std::unique_ptr<uint8_t[]> out(new uint8_t[capacity == 0 ? 1 : capacity]);
  // With capacity 0, hand over a pointer whose every byte is out of bounds for the decoder.
  uint8_t* place = capacity == 0 ? out.get() + 1 : out.get();
  const base64::DecodeResult result = base64::decode(text.data(), text.size(), place, capacity);
  if (result.ok) {
    FUZZ_CHECK(result.size <= capacity);
    bytes.assign(place, place + result.size);
  }
  return result;
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler;
  using namespace sampler::fuzz;
  const std::string_view text = as_text(data, size);

  // The input as base64 text.
  const base64::DecodedBytes decoded = base64::decode_to_vector(text);
  FUZZ_CHECK(decoded.ok == reference_is_canonical(text));
  if (decoded.ok) {
    FUZZ_CHECK(base64::encode_to_string(decoded.bytes) == text);
    FUZZ_CHECK(decoded.bytes.size() <= base64::max_decoded_size(size));
    // Exactly big enough works; one byte less is "buffer too small", never an overflow.
    std::vector<uint8_t> bytes;
    FUZZ_CHECK(decode_into(text, decoded.bytes.size(), bytes).ok && bytes == decoded.bytes);
    if (!decoded.bytes.empty()) {
      const base64::DecodeResult small = decode_into(text, decoded.bytes.size() - 1, bytes);
      FUZZ_CHECK(!small.ok && small.error != nullptr && small.error_offset < size);
    }
  } else {
    FUZZ_CHECK(decoded.bytes.empty() && !decoded.error.empty() && decoded.error_offset <= size);
    std::vector<uint8_t> bytes;
    const base64::DecodeResult core = decode_into(text, base64::max_decoded_size(size), bytes);
    FUZZ_CHECK(!core.ok && core.error_offset == decoded.error_offset && decoded.error == core.error);
  }
  // Any capacity from the input's length: no overflow whatever the outcome.
  std::vector<uint8_t> ignored;
  decode_into(text, size % 7, ignored);

  // The input as bytes: encoded, then decoded back.
  const std::string encoded = base64::encode_to_string(std::span<const uint8_t>(data, size));
  FUZZ_CHECK(encoded.size() == base64::encoded_size(size));
  const base64::DecodedBytes back = base64::decode_to_vector(encoded);
  FUZZ_CHECK(back.ok && back.bytes == std::vector<uint8_t>(data, data + size));
  if (size > 0) {
    std::unique_ptr<char[]> small(new char[encoded.size() - 1]);
    FUZZ_CHECK(base64::encode(data, size, small.get(), encoded.size() - 1) == 0);
  }
  return 0;
}
