// Base64 (sections/core/base64.h): RFC 4648 section 10 test vectors, strict decoding of malformed text with
// the offending offset, and the capacity rules the crash handler relies on.
#include "sections/core/base64.h"

#include "sections/base64.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace sampler::base64 {
namespace {

std::string encode_string(const std::string& data) {
  std::string out(encoded_size(data.size()), '?');
  size_t n = encode(reinterpret_cast<const uint8_t*>(data.data()), data.size(), out.data(), out.size());
  out.resize(n);
  return out;
}

struct Decoded {
  DecodeResult result;
  std::string data;
};

Decoded decode_string(const std::string& text, size_t capacity = SIZE_MAX) {
  std::vector<uint8_t> out(capacity == SIZE_MAX ? max_decoded_size(text.size()) : capacity);
  DecodeResult r = decode(text.data(), text.size(), out.data(), out.size());
  Decoded d{r, {}};
  if (r.ok) d.data.assign(reinterpret_cast<const char*>(out.data()), r.size);
  return d;
}

// RFC 4648 section 10.
const std::pair<const char*, const char*> kRfcVectors[] = {
    {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},          {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
};

TEST(Base64, Rfc4648Section10Encode) {
  for (const auto& [plain, encoded] : kRfcVectors) EXPECT_EQ(encode_string(plain), encoded) << plain;
}

TEST(Base64, Rfc4648Section10Decode) {
  for (const auto& [plain, encoded] : kRfcVectors) {
    Decoded d = decode_string(encoded);
    ASSERT_TRUE(d.result.ok) << encoded << ": " << d.result.error;
    EXPECT_EQ(d.data, plain) << encoded;
    EXPECT_EQ(d.result.size, strlen(plain));
  }
}

TEST(Base64, WholeAlphabetAndBinary) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  std::string text = encode_string(all);
  EXPECT_EQ(text.substr(0, 8), "AAECAwQF");
  EXPECT_EQ(text.substr(text.size() - 8), "/P3+/w==");  // ... fc fd fe, then ff alone
  Decoded d = decode_string(text);
  ASSERT_TRUE(d.result.ok);
  EXPECT_EQ(d.data, all);
}

TEST(Base64, EncodedSizes) {
  EXPECT_EQ(encoded_size(0), 0u);
  EXPECT_EQ(encoded_size(1), 4u);
  EXPECT_EQ(encoded_size(3), 4u);
  EXPECT_EQ(encoded_size(4), 8u);
  EXPECT_GE(max_decoded_size(8), 6u);
}

TEST(Base64, EncodeCapacity) {
  const uint8_t data[] = {1, 2, 3, 4};
  char out[8];
  EXPECT_EQ(encode(data, 4, out, 7), 0u);
  EXPECT_EQ(encode(data, 4, out, 8), 8u);
  EXPECT_EQ(encode(data, 3, out, 4), 4u);
  EXPECT_EQ(encode(data, 3, out, 3), 0u);
  EXPECT_EQ(encode(data, 0, out, 0), 0u);  // nothing to write
  // An absurd length cannot wrap around into a small requirement.
  EXPECT_EQ(encode(data, SIZE_MAX, out, 8), 0u);
  EXPECT_EQ(encode(data, SIZE_MAX - 1, out, 8), 0u);
}

struct Malformed {
  const char* text;
  size_t offset;
  const char* why;
};

TEST(Base64, MalformedInputs) {
  const Malformed cases[] = {
      {"Zg=", 3, "base64 text ends inside a 4-character group"},
      {"Z", 1, "base64 text ends inside a 4-character group"},
      {"Zm9vY", 5, "base64 text ends inside a 4-character group"},
      {"Zm9v!mFy", 4, "invalid base64 character"},
      {"Zm9 ", 3, "invalid base64 character"},
      {"Zm9v\nYmFy", 4, "invalid base64 character"},
      {"Zm9vYmF-", 7, "invalid base64 character"},  // URL-safe alphabet is not accepted
      {"Zg", 2, "base64 text ends inside a 4-character group"},
      {"=AAA", 0, "misplaced '=' padding"},
      {"A===", 1, "misplaced '=' padding"},
      {"AA=A", 3, "misplaced '=' padding"},
      {"Zg==Zm8=", 4, "base64 data after '=' padding"},
      {"Zm8=Zm9v", 4, "base64 data after '=' padding"},
      {"Zh==", 1, "non-canonical base64: unused bits are not zero"},
      {"Zm9=", 2, "non-canonical base64: unused bits are not zero"},
      {"Zg=!", 3, "misplaced '=' padding"},
      {"Zm9v Zm9v", 4, "invalid base64 character"},
  };
  for (const Malformed& c : cases) {
    Decoded d = decode_string(c.text);
    EXPECT_FALSE(d.result.ok) << c.text;
    EXPECT_EQ(d.result.error_offset, c.offset) << c.text;
    ASSERT_NE(d.result.error, nullptr) << c.text;
    EXPECT_STREQ(d.result.error, c.why) << c.text;
  }
}

TEST(Base64, DecodeCapacityIsExact) {
  // "Zm9vYg==" is 4 bytes: 4 is enough, 3 is not (reported at the quantum that does not fit).
  Decoded fits = decode_string("Zm9vYg==", 4);
  ASSERT_TRUE(fits.result.ok);
  EXPECT_EQ(fits.data, "foob");
  Decoded small = decode_string("Zm9vYg==", 3);
  EXPECT_FALSE(small.result.ok);
  EXPECT_EQ(small.result.error_offset, 4u);
  EXPECT_STREQ(small.result.error, "base64 output buffer too small");
  Decoded none = decode_string("Zm9v", 0);
  EXPECT_FALSE(none.result.ok);
  EXPECT_EQ(none.result.error_offset, 0u);
  Decoded empty = decode_string("", 0);
  EXPECT_TRUE(empty.result.ok);
  EXPECT_EQ(empty.result.size, 0u);
}

TEST(Base64, DecodeWritesNothingPastCapacity) {
  uint8_t out[8];
  memset(out, 0xaa, sizeof out);
  DecodeResult r = decode("Zm9vYmFy", 8, out, 5);
  EXPECT_FALSE(r.ok);
  for (size_t i = 5; i < sizeof out; ++i) EXPECT_EQ(out[i], 0xaa);
}

TEST(Base64, RandomRoundTrips) {
  std::mt19937_64 random(20240601);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string data(random() % 64, '\0');
    for (char& c : data) c = static_cast<char>(random());
    std::string text = encode_string(data);
    ASSERT_EQ(text.size(), encoded_size(data.size()));
    Decoded d = decode_string(text);
    ASSERT_TRUE(d.result.ok) << text;
    ASSERT_EQ(d.data, data);
  }
}

TEST(Base64Vector, DecodeToVector) {
  DecodedBytes d = decode_to_vector("Zm9vYmE=");
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(std::string(d.bytes.begin(), d.bytes.end()), "fooba");
  DecodedBytes bad = decode_to_vector("Zm9vYmE");
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(bad.bytes.empty());
  EXPECT_EQ(bad.error_offset, 7u);
  EXPECT_EQ(bad.error, "base64 text ends inside a 4-character group");
  EXPECT_TRUE(decode_to_vector("").ok);
}

TEST(Base64Vector, EncodeToString) {
  const uint8_t data[] = {'f', 'o', 'o', 'b'};
  EXPECT_EQ(encode_to_string(data), "Zm9vYg==");
  EXPECT_EQ(encode_to_string({}), "");
}

}  // namespace
}  // namespace sampler::base64
