// Compact Backtrace Format (sections/core/cbf.h): exact encodings checked by hand against Swift's Compact Backtrace
// Format and docs/formats.md section 3.2, every instruction for every word size, every malformed case with its offset,
// random round trips, and encoder overflow.
#include "sections/core/cbf.h"

#include "sections/cbf_decode.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace sampler::cbf {
namespace {

using Bytes = std::vector<uint8_t>;

const WordSize kSizes[] = {WordSize::k16, WordSize::k32, WordSize::k64};

uint64_t mask_of(WordSize size) {
  return size == WordSize::k64 ? ~uint64_t{0} : (uint64_t{1} << (8 * word_bytes(size))) - 1;
}

std::string hex(const Bytes& bytes) {
  std::string out;
  static const char kDigits[] = "0123456789abcdef";
  for (uint8_t b : bytes) {
    if (!out.empty()) out += ' ';
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

/// What a test feeds the encoder: a frame or an omit.
struct Step {
  bool is_omit;
  FrameKind kind;
  uint64_t value;  // address or omitted count
};
Step pc(uint64_t a) { return {false, FrameKind::kPc, a}; }
Step ra(uint64_t a) { return {false, FrameKind::kRa, a}; }
Step async(uint64_t a) { return {false, FrameKind::kAsync, a}; }
Step omit(uint64_t n) { return {true, FrameKind::kPc, n}; }

Bytes encode_steps(WordSize size, const std::vector<Step>& steps, bool truncated = false) {
  Bytes out(4096 + steps.size() * 20);
  Encoder encoder(size, out.data(), out.size());
  for (const Step& s : steps) {
    if (s.is_omit) {
      encoder.omit(s.value);
    } else {
      encoder.frame(s.kind, s.value);
    }
  }
  size_t n = encoder.finish(truncated);
  EXPECT_NE(n, 0u);
  out.resize(n);
  return out;
}

/// Every item up to and including the final one.
std::vector<Item> decode_all(const Bytes& bytes) {
  Decoder decoder(bytes.data(), bytes.size());
  std::vector<Item> items;
  for (size_t guard = 0; guard <= bytes.size() + 1; ++guard) {
    Item item = decoder.next();
    items.push_back(item);
    if (item.type != ItemType::kFrame && item.type != ItemType::kOmit && item.type != ItemType::kRepeat) break;
  }
  return items;
}

/// Renders decoded items compactly for exact comparisons: "pc:0x10 ra:0x20 rep:3:ra:0x20 omit:5 end".
std::string render(const std::vector<Item>& items) {
  std::string out;
  char buffer[64];
  for (const Item& item : items) {
    if (!out.empty()) out += ' ';
    const char* kind = item.frame.kind == FrameKind::kPc ? "pc" : item.frame.kind == FrameKind::kRa ? "ra" : "async";
    switch (item.type) {
      case ItemType::kFrame:
        snprintf(buffer, sizeof buffer, "%s:0x%llx", kind, static_cast<unsigned long long>(item.frame.address));
        break;
      case ItemType::kRepeat:
        snprintf(buffer, sizeof buffer, "rep:%llu:%s:0x%llx", static_cast<unsigned long long>(item.count), kind,
                 static_cast<unsigned long long>(item.frame.address));
        break;
      case ItemType::kOmit:
        snprintf(buffer, sizeof buffer, "omit:%llu", static_cast<unsigned long long>(item.count));
        break;
      case ItemType::kEnd: snprintf(buffer, sizeof buffer, "end@%zu", item.offset); break;
      case ItemType::kTruncated: snprintf(buffer, sizeof buffer, "trunc@%zu", item.offset); break;
      case ItemType::kEndOfData: snprintf(buffer, sizeof buffer, "eod@%zu", item.offset); break;
      case ItemType::kError: snprintf(buffer, sizeof buffer, "error@%zu:%s", item.offset, item.error); break;
    }
    out += buffer;
  }
  return out;
}

// ------------------------------------------------------------------------------------------ exact encodings

TEST(CbfEncode, SeedExampleSingleByteFfOn32Bits) {
  // the Compact Backtrace Format: "a single address byte with value 0xff on a 32-bit backtrace represents 0xffffffff".
  EXPECT_EQ(hex(encode_steps(WordSize::k32, {pc(0xffffffff)})), "01 18 ff 00");
  EXPECT_EQ(render(decode_all({0x01, 0x18, 0xff})), "pc:0xffffffff eod@3");
  EXPECT_EQ(render(decode_all({0x00, 0x18, 0xff})), "pc:0xffff eod@3");
  EXPECT_EQ(render(decode_all({0x02, 0x18, 0xff})), "pc:0xffffffffffffffff eod@3");
}

TEST(CbfEncode, InformationByte) {
  EXPECT_EQ(hex(encode_steps(WordSize::k16, {})), "00 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k32, {})), "01 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {})), "02 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {}, true)), "02 01");
}

TEST(CbfEncode, EndVersusTrunc) {
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x10)}, false)), "02 18 10 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x10)}, true)), "02 18 10 01");
  EXPECT_EQ(render(decode_all({0x02, 0x18, 0x10, 0x01})), "pc:0x10 trunc@3");
}

TEST(CbfEncode, AbsoluteThenShorterDelta) {
  // 0x401000 needs 3 bytes absolute; 0x401234 - 0x401000 = 0x234 needs 2 as a delta: relative ra, 0x21.
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x401000), ra(0x401234)})), "02 1a 40 10 00 21 02 34 00");
  // Backwards: -0x234 is fd cc, sign-extended.
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x401234), ra(0x401000)})), "02 1a 40 12 34 21 fd cc 00");
  EXPECT_EQ(render(decode_all({0x02, 0x1a, 0x40, 0x12, 0x34, 0x21, 0xfd, 0xcc, 0x00})),
            "pc:0x401234 ra:0x401000 end@8");
}

TEST(CbfEncode, AbsoluteOnTie) {
  // 0x20 is one byte absolute and 0x10 one byte as a delta: absolute wins the tie.
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x10), ra(0x20)})), "02 18 10 28 20 00");
  // A delta of zero with a different kind is one byte, shorter than a 3-byte absolute.
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x401000), ra(0x401000)})), "02 1a 40 10 00 20 00 00");
}

TEST(CbfEncode, SignExtensionDecidesLength) {
  // 0x80 as one byte would sign-extend to all ones: two bytes, 00 80.
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x80)})), "02 19 00 80 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x7f)})), "02 18 7f 00");
  // Addresses with the top bits set are short: 0xffff...ff80 is one byte 80.
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0xffffffffffffff80)})), "02 18 80 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k32, {pc(0xffff8000)})), "01 19 80 00 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x7fffffffffffffff)})), "02 1f 7f ff ff ff ff ff ff ff 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x8000000000000000)})), "02 1f 80 00 00 00 00 00 00 00 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k32, {pc(0x80000000)})), "01 1b 80 00 00 00 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k16, {pc(0x8000)})), "00 19 80 00 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k16, {pc(0x7f00)})), "00 19 7f 00 00");
}

TEST(CbfEncode, AddressesAreTruncatedToTheWord) {
  EXPECT_EQ(hex(encode_steps(WordSize::k16, {pc(0x12345)})), "00 19 23 45 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k32, {pc(0x1234567890)})), "01 1b 34 56 78 90 00");
}

TEST(CbfEncode, WrappingDeltaOn16Bits) {
  // 0x8010 after 0x7ff0: absolute 2 bytes, delta 0x20 one byte.
  EXPECT_EQ(hex(encode_steps(WordSize::k16, {pc(0x7ff0), ra(0x8010)})), "00 19 7f f0 20 20 00");
  // 0x7f80 after 0x8000: delta -0x80 (one byte 80) wraps through the sign.
  EXPECT_EQ(hex(encode_steps(WordSize::k16, {pc(0x8000), ra(0x7f80)})), "00 19 80 00 20 80 00");
}

TEST(CbfEncode, FrameKindsForEveryWordSize) {
  for (WordSize size : kSizes) {
    uint8_t info = static_cast<uint8_t>(size);
    EXPECT_EQ(encode_steps(size, {pc(0x12)}), (Bytes{info, 0x18, 0x12, 0x00}));
    EXPECT_EQ(encode_steps(size, {ra(0x12)}), (Bytes{info, 0x28, 0x12, 0x00}));
    EXPECT_EQ(encode_steps(size, {async(0x12)}), (Bytes{info, 0x38, 0x12, 0x00}));
    // Relative forms: a two-byte absolute then a one-byte delta of +1 and -1.
    EXPECT_EQ(encode_steps(size, {pc(0x1234), ra(0x1235), async(0x1234)}),
              (Bytes{info, 0x19, 0x12, 0x34, 0x20, 0x01, 0x30, 0xff, 0x00}));
    EXPECT_EQ(render(decode_all({info, 0x19, 0x12, 0x34, 0x20, 0x01, 0x30, 0xff, 0x00})),
              "pc:0x1234 ra:0x1235 async:0x1234 end@8");
  }
}

TEST(CbfEncode, WidestAddressForEveryWordSize) {
  // An address that needs the whole word uses count = word - 1.
  EXPECT_EQ(hex(encode_steps(WordSize::k16, {ra(0x4000)})), "00 29 40 00 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k32, {ra(0x40000000)})), "01 2b 40 00 00 00 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {ra(0x4000000000000000)})), "02 2f 40 00 00 00 00 00 00 00 00");
}

TEST(CbfEncode, RepeatInline) {
  for (WordSize size : kSizes) {
    uint8_t info = static_cast<uint8_t>(size);
    EXPECT_EQ(encode_steps(size, {ra(0x12), ra(0x12)}), (Bytes{info, 0x28, 0x12, 0x80, 0x00}));
    std::vector<Step> nine(9, ra(0x12));  // the frame and 8 repeats: the largest inline count
    EXPECT_EQ(encode_steps(size, nine), (Bytes{info, 0x28, 0x12, 0x87, 0x00}));
    EXPECT_EQ(render(decode_all({info, 0x28, 0x12, 0x87, 0x00})), "ra:0x12 rep:8:ra:0x12 end@4");
  }
}

TEST(CbfEncode, RepeatExternal) {
  for (WordSize size : kSizes) {
    uint8_t info = static_cast<uint8_t>(size);
    std::vector<Step> ten(10, ra(0x12));  // 9 repeats: external, one byte
    EXPECT_EQ(encode_steps(size, ten), (Bytes{info, 0x28, 0x12, 0x88, 0x09, 0x00}));
    std::vector<Step> many(257, ra(0x12));  // 256 repeats: two bytes, most significant first
    EXPECT_EQ(encode_steps(size, many), (Bytes{info, 0x28, 0x12, 0x89, 0x01, 0x00, 0x00}));
    EXPECT_EQ(render(decode_all({info, 0x28, 0x12, 0x89, 0x01, 0x00, 0x00})), "ra:0x12 rep:256:ra:0x12 end@6");
  }
}

TEST(CbfEncode, RepeatLongerThanTheWordIsSplit) {
  // 70000 repeats do not fit 16 bits: 0xffff then 70000 - 65535 = 4465 = 0x1171.
  std::vector<Step> steps(70001, pc(0x12));
  EXPECT_EQ(hex(encode_steps(WordSize::k16, steps)), "00 18 12 89 ff ff 89 11 71 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k32, steps)), "01 18 12 8a 01 11 70 00");
}

TEST(CbfEncode, RepeatNeedsSameKindAndAddress) {
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {pc(0x12), ra(0x12), ra(0x12), pc(0x12)})),
            "02 18 12 28 12 80 18 12 00");
}

TEST(CbfEncode, OmitInlineAndExternal) {
  for (WordSize size : kSizes) {
    uint8_t info = static_cast<uint8_t>(size);
    EXPECT_EQ(encode_steps(size, {omit(1)}), (Bytes{info, 0x40, 0x00}));
    EXPECT_EQ(encode_steps(size, {omit(32)}), (Bytes{info, 0x5f, 0x00}));
    EXPECT_EQ(encode_steps(size, {omit(33)}), (Bytes{info, 0x60, 0x21, 0x00}));
    EXPECT_EQ(encode_steps(size, {omit(0x1234)}), (Bytes{info, 0x61, 0x12, 0x34, 0x00}));
    EXPECT_EQ(encode_steps(size, {omit(0)}), (Bytes{info, 0x00}));  // nothing omitted: nothing written
    EXPECT_EQ(render(decode_all({info, 0x5f, 0x60, 0x21, 0x61, 0x12, 0x34})), "omit:32 omit:33 omit:4660 eod@7");
  }
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {omit(0x0102030405060708)})), "02 67 01 02 03 04 05 06 07 08 00");
  EXPECT_EQ(hex(encode_steps(WordSize::k32, {omit(0x01020304)})), "01 63 01 02 03 04 00");
  // Longer than the word: split into word-sized omits.
  EXPECT_EQ(hex(encode_steps(WordSize::k16, {omit(0x12345)})), "00 61 ff ff 61 23 46 00");
}

TEST(CbfEncode, OmitBreaksRepeatsButNotDeltas) {
  // The frame after an omit is written again (as a zero delta) rather than as a rep.
  EXPECT_EQ(hex(encode_steps(WordSize::k64, {ra(0x401000), ra(0x401000), omit(3), ra(0x401000)})),
            "02 2a 40 10 00 80 42 20 00 00");
  EXPECT_EQ(render(decode_all({0x02, 0x2a, 0x40, 0x10, 0x00, 0x80, 0x42, 0x20, 0x00, 0x00})),
            "ra:0x401000 rep:1:ra:0x401000 omit:3 ra:0x401000 end@9");
}

TEST(CbfEncode, InvalidWordSizeIsUnusable) {
  uint8_t out[16];
  Encoder encoder(static_cast<WordSize>(3), out, sizeof out);
  encoder.frame(FrameKind::kPc, 1);
  EXPECT_EQ(encoder.finish(false), 0u);
  EXPECT_TRUE(encoder.overflowed());
}

// ---------------------------------------------------------------------------------------------- decoding

TEST(CbfDecode, WrappingRelativeAddresses) {
  // 16 bits: 0xfff0 + 0x20 wraps to 0x0010; 32 bits: 0x10 - 0x20 wraps to 0xfffffff0.
  EXPECT_EQ(render(decode_all({0x00, 0x19, 0xff, 0xf0, 0x10, 0x20, 0x00})), "pc:0xfff0 pc:0x10 end@6");
  EXPECT_EQ(render(decode_all({0x01, 0x18, 0x10, 0x20, 0xe0, 0x00})), "pc:0x10 ra:0xfffffff0 end@5");
  EXPECT_EQ(render(decode_all({0x02, 0x18, 0x10, 0x20, 0xe0, 0x00})), "pc:0x10 ra:0xfffffffffffffff0 end@5");
  EXPECT_EQ(render(decode_all({0x02, 0x18, 0xff, 0x20, 0x01, 0x00})), "pc:0xffffffffffffffff ra:0x0 end@5");
}

TEST(CbfDecode, ExternalCountsAreZeroExtended) {
  EXPECT_EQ(render(decode_all({0x00, 0x60, 0xff})), "omit:255 eod@3");
  EXPECT_EQ(render(decode_all({0x00, 0x61, 0xff, 0xff})), "omit:65535 eod@4");
  EXPECT_EQ(render(decode_all({0x02, 0x18, 0x01, 0x88, 0xff})), "pc:0x1 rep:255:pc:0x1 eod@5");
  EXPECT_EQ(render(decode_all({0x02, 0x18, 0x01, 0x8f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})),
            "pc:0x1 rep:18446744073709551615:pc:0x1 eod@12");
}

TEST(CbfDecode, RepeatAfterOmitRepeatsTheLastFrame) {
  EXPECT_EQ(render(decode_all({0x02, 0x28, 0x05, 0x40, 0x80, 0x00})), "ra:0x5 omit:1 rep:1:ra:0x5 end@5");
}

TEST(CbfDecode, TrailingBytesAfterEndAreIgnoredAndEndIsSticky) {
  Bytes bytes{0x02, 0x18, 0x05, 0x00, 0xff, 0xff};
  Decoder decoder(bytes.data(), bytes.size());
  EXPECT_EQ(decoder.next().type, ItemType::kFrame);
  for (int i = 0; i < 3; ++i) {
    Item item = decoder.next();
    EXPECT_EQ(item.type, ItemType::kEnd);
    EXPECT_EQ(item.offset, 3u);
  }
  EXPECT_EQ(decoder.word_size(), WordSize::k64);
}

TEST(CbfDecode, EndOfDataWithoutTerminator) {
  EXPECT_EQ(render(decode_all({0x01})), "eod@1");
  EXPECT_EQ(render(decode_all({0x01, 0x28, 0x07})), "ra:0x7 eod@3");
}

struct Malformed {
  Bytes bytes;
  const char* expected;  // render() of every item, ending with the error
};

TEST(CbfDecode, MalformedInputs) {
  const Malformed cases[] = {
      {{}, "error@0:empty CBF data"},
      {{0x04}, "error@0:unsupported CBF version (only version 0 is known)"},
      {{0xfe, 0x00}, "error@0:unsupported CBF version (only version 0 is known)"},
      {{0x03, 0x00}, "error@0:reserved CBF word size"},
      {{0x02, 0x80}, "error@1:CBF rep before any frame"},
      {{0x02, 0x40, 0x80}, "omit:1 error@2:CBF rep before any frame"},
      {{0x02, 0x10, 0x05}, "error@1:first CBF address is relative"},
      {{0x02, 0x40, 0x20, 0x05}, "omit:1 error@2:first CBF address is relative"},
      {{0x02, 0x1b, 0x01, 0x02, 0x03}, "error@1:CBF address runs past the end of the data"},
      {{0x02, 0x18}, "error@1:CBF address runs past the end of the data"},
      {{0x02, 0x18, 0x07, 0x21, 0x01}, "pc:0x7 error@3:CBF address runs past the end of the data"},
      {{0x00, 0x1a, 0x01, 0x02, 0x03}, "error@1:CBF address wider than the word"},
      {{0x01, 0x1c, 0x01, 0x02, 0x03, 0x04, 0x05}, "error@1:CBF address wider than the word"},
      {{0x00, 0x62, 0x01, 0x02, 0x03}, "error@1:CBF count wider than the word"},
      {{0x01, 0x64, 0x01, 0x02, 0x03, 0x04, 0x05}, "error@1:CBF count wider than the word"},
      {{0x02, 0x68, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09}, "error@1:CBF count wider than the word"},
      {{0x02, 0x7f}, "error@1:CBF count wider than the word"},
      {{0x00, 0x18, 0x01, 0x8a, 0x01, 0x02, 0x03}, "pc:0x1 error@3:CBF count wider than the word"},
      {{0x01, 0x18, 0x01, 0x8c, 0x01, 0x02, 0x03, 0x04, 0x05}, "pc:0x1 error@3:CBF count wider than the word"},
      {{0x02, 0x61, 0x01}, "error@1:CBF count runs past the end of the data"},
      {{0x02, 0x18, 0x01, 0x89, 0x01}, "pc:0x1 error@3:CBF count runs past the end of the data"},
      {{0x02, 0x18, 0x01, 0x88}, "pc:0x1 error@3:CBF count runs past the end of the data"},
  };
  for (const Malformed& c : cases) EXPECT_EQ(render(decode_all(c.bytes)), c.expected) << hex(c.bytes);
}

TEST(CbfDecode, EveryReservedOpcodeIsAnErrorAfterTheFramesBeforeIt) {
  for (unsigned opcode = 0x02; opcode <= 0xff; ++opcode) {
    if (opcode >= 0x10 && opcode < 0x90) continue;
    for (WordSize size : kSizes) {
      Bytes bytes{static_cast<uint8_t>(size), 0x18, 0x10, 0x80, static_cast<uint8_t>(opcode), 0x00};
      EXPECT_EQ(render(decode_all(bytes)), "pc:0x10 rep:1:pc:0x10 error@4:reserved CBF opcode") << opcode;
    }
  }
}

TEST(CbfDecode, EveryByteStringTerminatesWithinItsLength) {
  // Exhaustive over short inputs: the decoder always ends, within one item per byte, never past the buffer.
  std::mt19937 random(7);
  for (int iteration = 0; iteration < 20000; ++iteration) {
    Bytes bytes(random() % 12);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
    if (!bytes.empty()) bytes[0] &= 3;  // mostly valid information bytes
    Decoder decoder(bytes.data(), bytes.size());
    size_t items = 0;
    Item item{};
    do {
      item = decoder.next();
      ++items;
      ASSERT_LE(item.offset, bytes.size());
    } while (item.type == ItemType::kFrame || item.type == ItemType::kOmit || item.type == ItemType::kRepeat);
    EXPECT_LE(items, bytes.size() + 1);
  }
}

// ------------------------------------------------------------------------------------------ round trips

/// Expands decoded items back into steps (frames with rep unrolled, omits as they are).
std::vector<Step> expand(const std::vector<Item>& items) {
  std::vector<Step> steps;
  for (const Item& item : items) {
    if (item.type == ItemType::kFrame) steps.push_back({false, item.frame.kind, item.frame.address});
    if (item.type == ItemType::kRepeat) {
      for (uint64_t i = 0; i < item.count; ++i) steps.push_back({false, item.frame.kind, item.frame.address});
    }
    if (item.type == ItemType::kOmit) steps.push_back(omit(item.count));
  }
  return steps;
}

std::vector<Step> random_stack(std::mt19937_64& random, WordSize size) {
  uint64_t mask = mask_of(size);
  std::vector<Step> steps;
  size_t length = random() % 80;
  uint64_t address = random() & mask;
  for (size_t i = 0; i < length; ++i) {
    switch (random() % 10) {
      case 0: address = random() & mask; break;                              // anywhere
      case 1: address = (address + (random() % 0x200) - 0x100) & mask; break;  // close, either side
      case 2: address = (mask - random() % 0x100) & mask; break;            // near the top: wraps
      case 3: address = random() % 0x100; break;                            // near zero
      case 4: break;                                                        // same again: rep
      case 5:
        steps.push_back(omit(1 + random() % 5000));
        continue;
      default: address = (address + (random() % 0x100000) - 0x80000) & mask; break;
    }
    FrameKind kind = static_cast<FrameKind>(1 + random() % 3);
    size_t copies = random() % 8 == 0 ? 1 + random() % 20 : 1;
    for (size_t c = 0; c < copies; ++c) steps.push_back({false, kind, address});
  }
  return steps;
}

TEST(CbfRoundTrip, RandomStacksForEveryWordSize) {
  std::mt19937_64 random(0x5eed);
  for (WordSize size : kSizes) {
    for (int iteration = 0; iteration < 3000; ++iteration) {
      std::vector<Step> steps = random_stack(random, size);
      bool truncated = random() % 2 == 0;
      Bytes bytes = encode_steps(size, steps, truncated);
      size_t frames = 0, omits = 0;
      for (const Step& s : steps) (s.is_omit ? omits : frames)++;
      ASSERT_LE(bytes.size(), max_encoded_size(size, frames, omits));
      std::vector<Item> items = decode_all(bytes);
      ASSERT_EQ(items.back().type, truncated ? ItemType::kTruncated : ItemType::kEnd) << hex(bytes);
      ASSERT_EQ(items.back().offset, bytes.size() - 1);
      std::vector<Step> decoded = expand(items);
      ASSERT_EQ(decoded.size(), steps.size()) << hex(bytes);
      for (size_t i = 0; i < steps.size(); ++i) {
        ASSERT_EQ(decoded[i].is_omit, steps[i].is_omit) << i;
        ASSERT_EQ(decoded[i].value, steps[i].value) << i << " " << hex(bytes);
        if (!steps[i].is_omit) {
          ASSERT_EQ(decoded[i].kind, steps[i].kind) << i;
        }
      }
    }
  }
}

TEST(CbfRoundTrip, EncodeConvenienceMatchesEncoder) {
  const Frame frames[] = {{FrameKind::kPc, 0x55550000a123}, {FrameKind::kRa, 0x55550000b456},
                          {FrameKind::kRa, 0x7f0000001000}, {FrameKind::kRa, 0x7f0000001000}};
  uint8_t out[64];
  size_t n = encode(WordSize::k64, frames, 4, true, out, sizeof out);
  ASSERT_NE(n, 0u);
  EXPECT_EQ(Bytes(out, out + n), encode_steps(WordSize::k64, {pc(0x55550000a123), ra(0x55550000b456),
                                                              ra(0x7f0000001000), ra(0x7f0000001000)},
                                              true));
  EXPECT_EQ(render(decode_all(Bytes(out, out + n))),
            "pc:0x55550000a123 ra:0x55550000b456 ra:0x7f0000001000 rep:1:ra:0x7f0000001000 trunc@19");
}

// --------------------------------------------------------------------------------------------- overflow

TEST(CbfEncode, OverflowReturnsZeroAndNeverWritesPastCapacity) {
  std::mt19937_64 random(99);
  for (WordSize size : kSizes) {
    std::vector<Step> steps = random_stack(random, size);
    steps.push_back(omit(100));
    steps.push_back(pc(1));
    steps.push_back(pc(1));
    Bytes full = encode_steps(size, steps);
    for (size_t capacity = 0; capacity <= full.size(); ++capacity) {
      Bytes out(capacity + 8, 0xee);
      Encoder encoder(size, out.data(), capacity);
      for (const Step& s : steps) s.is_omit ? encoder.omit(s.value) : encoder.frame(s.kind, s.value);
      size_t n = encoder.finish(false);
      if (capacity < full.size()) {
        EXPECT_EQ(n, 0u) << capacity;
        EXPECT_TRUE(encoder.overflowed());
      } else {
        EXPECT_EQ(n, full.size());
        EXPECT_EQ(Bytes(out.begin(), out.begin() + n), full);
      }
      for (size_t i = capacity; i < out.size(); ++i) ASSERT_EQ(out[i], 0xee) << capacity;
    }
  }
}

TEST(CbfEncode, MaxEncodedSizeIsEnoughForTheWorstCase) {
  for (WordSize size : kSizes) {
    // Alternating far-apart addresses with the top bit clear need the whole word every time.
    uint64_t high = (mask_of(size) >> 1) & ~uint64_t{0xff};
    std::vector<Frame> frames;
    for (int i = 0; i < 10; ++i) frames.push_back({FrameKind::kRa, i % 2 ? high : 0x7f});
    size_t capacity = max_encoded_size(size, frames.size());
    Bytes out(capacity);
    EXPECT_NE(encode(size, frames.data(), frames.size(), false, out.data(), out.size()), 0u);
  }
}

// ------------------------------------------------------------------------------- whole-buffer C++ layer

TEST(CbfDecodeStack, CollectsItemsAndStatus) {
  Bytes bytes = encode_steps(WordSize::k32, {pc(0x8048000), ra(0x8048100), ra(0x8048100), omit(40)}, true);
  DecodedStack stack = decode_stack(bytes);
  EXPECT_TRUE(stack.ok());
  EXPECT_TRUE(stack.truncated());
  EXPECT_EQ(stack.word_size, WordSize::k32);
  EXPECT_EQ(stack.status, ItemType::kTruncated);
  EXPECT_EQ(stack.status_offset, bytes.size() - 1);
  EXPECT_FALSE(stack.error);
  EXPECT_EQ(render(stack.items), "pc:0x8048000 ra:0x8048100 rep:1:ra:0x8048100 omit:40");
  EXPECT_EQ(stack.frame_count(), 3u);
}

TEST(CbfDecodeStack, KeepsFramesBeforeAnError) {
  DecodedStack stack = decode_stack(Bytes{0x02, 0x18, 0x10, 0x28, 0x20, 0x95, 0x00});
  EXPECT_FALSE(stack.ok());
  EXPECT_EQ(stack.status, ItemType::kError);
  EXPECT_EQ(stack.status_offset, 5u);
  ASSERT_TRUE(stack.error);
  EXPECT_EQ(stack.error->offset, 5u);
  EXPECT_EQ(stack.error->message, "reserved CBF opcode");
  EXPECT_FALSE(stack.error->in_base64);
  EXPECT_EQ(render(stack.items), "pc:0x10 ra:0x20");
}

TEST(CbfDecodeStack, EmptyAndEndOfData) {
  DecodedStack empty = decode_stack(Bytes{});
  ASSERT_TRUE(empty.error);
  EXPECT_EQ(empty.error->message, "empty CBF data");
  DecodedStack open_ended = decode_stack(Bytes{0x00, 0x18, 0x01});
  EXPECT_TRUE(open_ended.ok());
  EXPECT_EQ(open_ended.status, ItemType::kEndOfData);
  EXPECT_EQ(open_ended.status_offset, 3u);
  EXPECT_EQ(open_ended.word_size, WordSize::k16);
}

TEST(CbfDecodeStack, FrameCountSaturates) {
  DecodedStack stack = decode_stack(Bytes{0x02, 0x18, 0x01, 0x8f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0x8f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00});
  EXPECT_EQ(stack.items.size(), 3u);  // counts stay counts: nothing is expanded
  EXPECT_EQ(stack.frame_count(), UINT64_MAX);
}

TEST(CbfDecodeStack, FromBase64) {
  // 02 1a 40 10 00 21 02 34 00 (pc 0x401000, ra 0x401234, end) in base64.
  DecodedStack stack = decode_stack_base64("AhpAEAAhAjQA");
  ASSERT_TRUE(stack.ok()) << stack.error->message;
  EXPECT_EQ(render(stack.items), "pc:0x401000 ra:0x401234");
  EXPECT_EQ(stack.status, ItemType::kEnd);

  DecodedStack bad = decode_stack_base64("AhpAEAAh!jQA");
  ASSERT_TRUE(bad.error);
  EXPECT_TRUE(bad.error->in_base64);
  EXPECT_EQ(bad.error->offset, 8u);
  EXPECT_EQ(bad.error->message, "invalid base64 character");
  EXPECT_TRUE(bad.items.empty());

  DecodedStack cbf_error = decode_stack_base64("AhA=");  // 02 10: relative first address
  ASSERT_TRUE(cbf_error.error);
  EXPECT_FALSE(cbf_error.error->in_base64);
  EXPECT_EQ(cbf_error.error->offset, 1u);
}

TEST(CbfDecodeStack, FrameKindNames) {
  EXPECT_EQ(frame_kind_name(FrameKind::kPc), "pc");
  EXPECT_EQ(frame_kind_name(FrameKind::kRa), "ra");
  EXPECT_EQ(frame_kind_name(FrameKind::kAsync), "async");
}

}  // namespace
}  // namespace sampler::cbf
