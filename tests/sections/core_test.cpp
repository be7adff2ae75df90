// The core's text building (sections/core/char_buffer.h): fixed-buffer appends, overflow, decimal and hex.
#include "sections/core/char_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace sampler {
namespace {

std::string text(const CharBuffer& buffer) { return std::string(buffer.data(), buffer.size()); }

TEST(CharBuffer, AppendsEveryKind) {
  char storage[64];
  CharBuffer buffer(storage, sizeof storage);
  buffer.append("signal:");
  buffer.append_decimal(11);
  buffer.append(':');
  buffer.append("SIGSEGV:0x", 10);
  buffer.append_hex(0xdeadbeef);
  EXPECT_EQ(text(buffer), "signal:11:SIGSEGV:0xdeadbeef");
  EXPECT_FALSE(buffer.overflowed());
  EXPECT_EQ(buffer.capacity(), sizeof storage);
}

TEST(CharBuffer, OverflowDropsAndFlags) {
  char storage[8] = {'.', '.', '.', '.', '.', '.', '.', '.'};
  CharBuffer buffer(storage, 5);
  buffer.append("abc");
  EXPECT_FALSE(buffer.overflowed());
  buffer.append("defg");
  EXPECT_TRUE(buffer.overflowed());
  EXPECT_EQ(text(buffer), "abcde");
  EXPECT_EQ(storage[5], '.');  // never writes past capacity
  buffer.append('z');
  EXPECT_EQ(buffer.size(), 5u);
  buffer.clear();
  EXPECT_FALSE(buffer.overflowed());
  EXPECT_EQ(buffer.size(), 0u);
  buffer.append_decimal(42);
  EXPECT_EQ(text(buffer), "42");
}

TEST(CharBuffer, ZeroCapacity) {
  CharBuffer buffer(nullptr, 0);
  buffer.append('a');
  buffer.append_hex(0);
  EXPECT_TRUE(buffer.overflowed());
  EXPECT_EQ(buffer.size(), 0u);
}

TEST(CharBuffer, DecimalEdges) {
  const std::pair<uint64_t, const char*> cases[] = {
      {0, "0"}, {9, "9"}, {10, "10"}, {1234567890, "1234567890"}, {UINT64_MAX, "18446744073709551615"}};
  for (const auto& [value, expected] : cases) {
    char storage[32];
    CharBuffer buffer(storage, sizeof storage);
    buffer.append_decimal(value);
    EXPECT_EQ(text(buffer), expected);
  }
}

TEST(CharBuffer, SignedDecimalEdges) {
  const std::pair<int64_t, const char*> cases[] = {
      {0, "0"}, {-1, "-1"}, {42, "42"}, {INT64_MAX, "9223372036854775807"}, {INT64_MIN, "-9223372036854775808"}};
  for (const auto& [value, expected] : cases) {
    char storage[32];
    CharBuffer buffer(storage, sizeof storage);
    buffer.append_signed_decimal(value);
    EXPECT_EQ(text(buffer), expected);
  }
}

TEST(CharBuffer, HexPaddingAndClamp) {
  char storage[64];
  CharBuffer buffer(storage, sizeof storage);
  buffer.append_hex(0);
  buffer.append(' ');
  buffer.append_hex(0xab, 4);
  buffer.append(' ');
  buffer.append_hex(UINT64_MAX);
  buffer.append(' ');
  buffer.append_hex(0x1, 40);  // more than 16 digits is clamped to 16
  EXPECT_EQ(text(buffer), "0 00ab ffffffffffffffff 0000000000000001");
}

TEST(FormatDecimal, CapacityIsExact) {
  char out[20];
  EXPECT_EQ(format_decimal(12345, out, 5), 5u);
  EXPECT_EQ(std::string(out, 5), "12345");
  EXPECT_EQ(format_decimal(12345, out, 4), 0u);
  EXPECT_EQ(format_decimal(0, out, 1), 1u);
  EXPECT_EQ(out[0], '0');
  EXPECT_EQ(format_decimal(0, out, 0), 0u);
  EXPECT_EQ(format_decimal(UINT64_MAX, out, 20), 20u);
}

TEST(FormatHex, DigitsAndCapacity) {
  char out[32];
  EXPECT_EQ(format_hex(0x1f, 1, out, sizeof out), 2u);
  EXPECT_EQ(std::string(out, 2), "1f");
  EXPECT_EQ(format_hex(0x1f, 6, out, sizeof out), 6u);
  EXPECT_EQ(std::string(out, 6), "00001f");
  EXPECT_EQ(format_hex(0x1f, 6, out, 5), 0u);
  EXPECT_EQ(format_hex(0x8000000000000000, 0, out, sizeof out), 16u);
  EXPECT_EQ(std::string(out, 16), "8000000000000000");
  // Zero-padding beyond 16 digits stays well defined (no shift past 63 bits).
  EXPECT_EQ(format_hex(0xabc, 20, out, sizeof out), 20u);
  EXPECT_EQ(std::string(out, 20), "00000000000000000abc");
}

}  // namespace
}  // namespace sampler
