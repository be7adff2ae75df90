// Symbolizer markup (LLVM's Symbolizer Markup Format): the core writer's exact output (sections/core/markup_writer.h)
// and the reader (sections/markup.h): tokenizing, the format's examples, malformed fields with their columns, and
// writer -> reader round trips.
#include "sections/markup.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sections/core/markup_writer.h"

namespace sampler::markup {
namespace {

/// Runs `write` on a fresh 512-byte CharBuffer and returns the text.
template <typename Write>
std::string written(Write write) {
  char storage[512];
  CharBuffer buffer(storage, sizeof storage);
  write(buffer);
  EXPECT_FALSE(buffer.overflowed());
  return std::string(buffer.data(), buffer.size());
}

// --------------------------------------------------------------------------------------------------- writer

TEST(MarkupWriter, AddressesHaveAnEvenNumberOfDigits) {
  const std::pair<uint64_t, const char*> cases[] = {
      {0, "0x00"},          {1, "0x01"},           {0x10, "0x10"},
      {0x123, "0x0123"},    {0xabcde, "0x0abcde"}, {0x7acba69d5000, "0x7acba69d5000"},
      {0xfffffffffffffff, "0x0fffffffffffffff"},   {UINT64_MAX, "0xffffffffffffffff"},
  };
  for (const auto& [value, expected] : cases) {
    EXPECT_EQ(written([&](CharBuffer& out) { append_address(out, value); }), expected);
  }
}

TEST(MarkupWriter, Reset) { EXPECT_EQ(written([](CharBuffer& out) { write_reset(out); }), "{{{reset}}}"); }

TEST(MarkupWriter, ModuleSeedExample) {
  const uint8_t build_id[] = {0x83, 0x23, 0x8a, 0xb5, 0x6b, 0xa1, 0x04, 0x97};
  EXPECT_EQ(written([&](CharBuffer& out) { write_module(out, 1, "libc.so", 7, build_id, sizeof build_id); }),
            "{{{module:1:libc.so:elf:83238ab56ba10497}}}");
}

TEST(MarkupWriter, ModuleNameIsSanitised) {
  const uint8_t build_id[] = {0x00, 0x0f};
  const char name[] = "/tmp/a:b}c\n\x7f{d\tE\xc3\xa9";
  EXPECT_EQ(written([&](CharBuffer& out) { write_module(out, 12, name, sizeof name - 1, build_id, 2); }),
            "{{{module:12:/tmp/a_b_c__{d_E\xc3\xa9:elf:000f}}}");
  // An empty name is allowed (Symbolizer Markup Format: "it might be empty").
  EXPECT_EQ(written([&](CharBuffer& out) { write_module(out, 0, "", 0, build_id, 1); }),
            "{{{module:0::elf:00}}}");
}

TEST(MarkupWriter, ModuleWithoutBuildIdWritesNothing) {
  EXPECT_EQ(written([](CharBuffer& out) { write_module(out, 1, "a.out", 5, nullptr, 0); }), "");
}

TEST(MarkupWriter, MmapSeedExample) {
  EXPECT_EQ(written([](CharBuffer& out) { write_mmap(out, 0x7acba69d5000, 0x5a000, 1, "rx", 0x1000); }),
            "{{{mmap:0x7acba69d5000:0x05a000:load:1:rx:0x1000}}}");
}

TEST(MarkupWriter, MmapFlagsAreCanonical) {
  const std::pair<const char*, const char*> cases[] = {
      {"r", "r"}, {"xr", "rx"}, {"RWX", "rwx"}, {"w-x", "wx"}, {"", ""}, {nullptr, ""}};
  for (const auto& [flags, expected] : cases) {
    EXPECT_EQ(written([&](CharBuffer& out) { write_mmap(out, 0, 0x1000, 3, flags, 0); }),
              std::string("{{{mmap:0x00:0x1000:load:3:") + expected + ":0x00}}}");
  }
}

TEST(MarkupWriter, BtAndPc) {
  EXPECT_EQ(written([](CharBuffer& out) { write_bt(out, 0, 0x12345678, CodeKind::kPc); }),
            "{{{bt:0:0x12345678:pc}}}");
  EXPECT_EQ(written([](CharBuffer& out) { write_bt(out, 1, 0xffffffff9abcdef0, CodeKind::kRa); }),
            "{{{bt:1:0xffffffff9abcdef0:ra}}}");
  EXPECT_EQ(written([](CharBuffer& out) { write_bt(out, 17, 0x804ff1c, CodeKind::kUnknown); }),
            "{{{bt:17:0x0804ff1c}}}");
  EXPECT_EQ(written([](CharBuffer& out) { write_pc(out, 0x12345678, CodeKind::kUnknown); }), "{{{pc:0x12345678}}}");
  EXPECT_EQ(written([](CharBuffer& out) { write_pc(out, 0xabc, CodeKind::kRa); }), "{{{pc:0x0abc:ra}}}");
  EXPECT_EQ(written([](CharBuffer& out) { write_pc(out, 0, CodeKind::kPc); }), "{{{pc:0x00:pc}}}");
}

TEST(MarkupWriter, OverflowIsFlaggedNotWrittenPast) {
  char storage[16] = {};
  storage[10] = '#';
  CharBuffer buffer(storage, 10);
  write_bt(buffer, 1, 0x1234, CodeKind::kRa);
  EXPECT_TRUE(buffer.overflowed());
  EXPECT_EQ(std::string(buffer.data(), buffer.size()), "{{{bt:1:0x");
  EXPECT_EQ(storage[10], '#');
}

// ------------------------------------------------------------------------------------------------ tokenizer

/// "T'text'@col", "S'sgr'@col" and "E'tag'[f1|f2]@col" for each node.
std::string describe(const std::vector<Node>& nodes) {
  std::string out;
  for (const Node& node : nodes) {
    if (!out.empty()) out += ' ';
    if (node.is_sgr()) {
      out += "S'" + std::string(node.text) + "'";
    } else if (node.is_element()) {
      out += "E'" + std::string(node.tag) + "'[";
      for (size_t i = 0; i < node.fields.size(); ++i) {
        if (i != 0) out += '|';
        out += std::string(node.fields[i]);
      }
      out += "]";
    } else {
      out += "T'" + std::string(node.text) + "'";
    }
    out += "@" + std::to_string(node.column);
  }
  return out;
}

std::string describe(std::string_view line) { return describe(tokenize(line)); }

TEST(MarkupTokenizer, Splits) {
  const std::pair<const char*, const char*> cases[] = {
      {"", ""},
      {"plain text", "T'plain text'@0"},
      {"{{{reset}}}", "E'reset'[]@0"},
      {"foo {{{bt:0:0x12:pc}}} bar", "T'foo '@0 E'bt'[0|0x12|pc]@4 T' bar'@22"},
      {"{{{pc:0x10}}}{{{pc:0x20}}}", "E'pc'[0x10]@0 E'pc'[0x20]@13"},
      {"{{{pc:}}}", "E'pc'[]@0"},
      {"{{{pc::}}}", "E'pc'[|]@0"},
      {"{{{pc}}}", "E'pc'[]@0"},
      // Not elements: no tag, an upper-case or non-letter tag, no closing braces.
      {"{{{}}}", "T'{{{}}}'@0"},
      {"{{{Pc:0x1}}}", "T'{{{Pc:0x1}}}'@0"},
      {"{{{ pc:0x1}}}", "T'{{{ pc:0x1}}}'@0"},
      {"{{{pc1:0x1}}}", "T'{{{pc1:0x1}}}'@0"},
      {"{{{pc:0x1", "T'{{{pc:0x1'@0"},
      {"{{{pc:0x1}}", "T'{{{pc:0x1}}'@0"},
      // An element may start inside text that looked like one.
      {"{{{{pc:0x10}}}", "T'{'@0 E'pc'[0x10]@1"},
      {"{{{a{{{pc:1}}}", "T'{{{a'@0 E'pc'[1]@4"},
      // The element ends at the first "}}}"; a lone '}' stays in the field (rejected by the parsers).
      {"{{{pc:a}b}}}}", "E'pc'[a}b]@0 T'}'@12"},
      // Nothing is interpreted inside a field.
      {"{{{pc:{{{x}}} y", "E'pc'[{{{x]@0 T' y'@13"},
      // The Symbolizer Markup Format's SGR sequences outside elements are nodes of their own, not text.
      {"\033[1m{{{pc:0x10}}}\033[0m", "S'\033[1m'@0 E'pc'[0x10]@4 S'\033[0m'@17"},
      {"a\033[31mred\033[0m b", "T'a'@0 S'\033[31m'@1 T'red'@6 S'\033[0m'@9 T' b'@13"},
      {"\033[37m\033[1m", "S'\033[37m'@0 S'\033[1m'@5"},
      // Other escape sequences are text, and nothing is interpreted inside a field.
      {"\033[2J\033[38m\033[3m\033[", "T'\033[2J\033[38m\033[3m\033['@0"},
      {"x\033[2J\033[0m", "T'x\033[2J'@0 S'\033[0m'@5"},
      {"{{{pc:\033[1m}}}", "E'pc'[\033[1m]@0"},
  };
  for (const auto& [line, expected] : cases) EXPECT_EQ(describe(line), expected) << line;
}

TEST(MarkupTokenizer, ViewsPointIntoTheLine) {
  std::string line = "x {{{mmap:0x1000:0x2000:load:1:r:0x00}}}";
  std::vector<Node> nodes = tokenize(line);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[1].text.data(), line.data() + 2);
  EXPECT_EQ(nodes[1].field_column(0), 10u);
  EXPECT_EQ(nodes[1].field_column(5), 33u);
  EXPECT_EQ(nodes[1].line.data(), line.data());
}

TEST(MarkupTokenizer, PathologicalLinesStayLinear) {
  // Many openings and no closing, or many closings: one text node each, quickly.
  std::string open;
  for (int i = 0; i < 200000; ++i) open += "{{{a:";
  EXPECT_EQ(tokenize(open).size(), 1u);
  std::string braces(1000000, '{');
  braces += "}}}";
  EXPECT_EQ(tokenize(braces).size(), 1u);
  std::string mixed;
  for (int i = 0; i < 100000; ++i) mixed += "{{{ab}}x";
  mixed += "}}}";
  EXPECT_EQ(tokenize(mixed).size(), 1u);
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "{{{pc:0x10}}}";
  EXPECT_EQ(tokenize(many).size(), 100000u);
}

TEST(MarkupTokenizer, SoleElement) {
  EXPECT_TRUE(sole_element("{{{reset}}}"));
  EXPECT_TRUE(sole_element("  {{{reset}}}\t"));
  EXPECT_TRUE(sole_element("\033[1m{{{reset}}}\033[0m"));  // colour around it is not text
  EXPECT_FALSE(sole_element("\033[2J{{{reset}}}"));
  EXPECT_EQ(sole_element(" {{{module:1:a:elf:00}}}")->tag, "module");
  EXPECT_FALSE(sole_element("x {{{reset}}}"));
  EXPECT_FALSE(sole_element("{{{reset}}}{{{reset}}}"));
  EXPECT_FALSE(sole_element(""));
  EXPECT_FALSE(sole_element("   "));
  EXPECT_TRUE(is_contextual_tag("reset"));
  EXPECT_TRUE(is_contextual_tag("module"));
  EXPECT_TRUE(is_contextual_tag("mmap"));
  EXPECT_FALSE(is_contextual_tag("bt"));
  EXPECT_FALSE(is_contextual_tag("pc"));
}

// ----------------------------------------------------------------------------------------------- fields

struct IntegerCase {
  const char* field;
  bool ok;
  uint64_t value;
  const char* error;
  size_t offset;
};

/// Runs every case through `parse` (parse_integer_field or parse_address_field): the value, or the error and its
/// offset.
template <typename Parse, size_t N>
void expect_integer_cases(Parse parse, const IntegerCase (&cases)[N]) {
  for (const IntegerCase& c : cases) {
    uint64_t value = 0;
    const char* error = nullptr;
    size_t offset = 0;
    bool ok = parse(c.field, value, error, offset);
    EXPECT_EQ(ok, c.ok) << c.field;
    if (c.ok) {
      EXPECT_EQ(value, c.value) << c.field;
    } else {
      EXPECT_STREQ(error, c.error) << c.field;
      EXPECT_EQ(offset, c.offset) << c.field;
    }
  }
}

TEST(MarkupFields, Integer) {
  const IntegerCase cases[] = {
      {"0", true, 0, nullptr, 0},
      {"42", true, 42, nullptr, 0},
      {"0x1f", true, 31, nullptr, 0},
      {"0x1F", true, 31, nullptr, 0},
      {"017", true, 15, nullptr, 0},
      {"18446744073709551615", true, UINT64_MAX, nullptr, 0},
      {"0xffffffffffffffff", true, UINT64_MAX, nullptr, 0},
      // As llvm-symbolizer reads %i (StringRef::getAsInteger with radix 0): 0X, 0b, 0B and 0o too.
      {"0X1f", true, 31, nullptr, 0},
      {"0b101", true, 5, nullptr, 0},
      {"0B1", true, 1, nullptr, 0},
      {"0o17", true, 15, nullptr, 0},
      {"0x00000000000000000001", true, 1, nullptr, 0},
      {"", false, 0, "empty field", 0},
      {"0x", false, 0, "no hex digits after 0x", 2},
      {"0b", false, 0, "no binary digits after 0b", 2},
      {"0b12", false, 0, "not a binary digit", 3},
      {"0o8", false, 0, "not an octal digit", 2},
      {"0O7", false, 0, "not a decimal digit", 1},
      {"08", false, 0, "not an octal digit", 1},
      {"12a", false, 0, "not a decimal digit", 2},
      {"-1", false, 0, "not a decimal digit", 0},
      {"0xfg", false, 0, "not a hex digit", 3},
      {"18446744073709551616", false, 0, "value does not fit in 64 bits", 0},
      {"0x10000000000000000", false, 0, "value does not fit in 64 bits", 2},
  };
  expect_integer_cases(parse_integer_field, cases);
}

TEST(MarkupFields, Decimal) {
  uint64_t value = 0;
  const char* error = nullptr;
  size_t offset = 0;
  EXPECT_TRUE(parse_decimal_field("0123", value, error, offset));  // %u: no octal
  EXPECT_EQ(value, 123u);
  EXPECT_FALSE(parse_decimal_field("0x10", value, error, offset));
  EXPECT_STREQ(error, "not a decimal digit");
  EXPECT_EQ(offset, 1u);
  EXPECT_FALSE(parse_decimal_field("", value, error, offset));
}

TEST(MarkupFields, Address) {
  const IntegerCase cases[] = {
      {"0x12345678", true, 0x12345678, nullptr, 0},
      {"0xFFFFFFFF9ABCDEF0", true, 0xffffffff9abcdef0, nullptr, 0},
      {"0x00", true, 0, nullptr, 0},
      {"0", true, 0, nullptr, 0},      // all zero digits: the 0x may be left out
      {"000", true, 0, nullptr, 0},
      {"0x0000000000000001", true, 1, nullptr, 0},
      // Any number of digits, as llvm-symbolizer reads %p (compiler-rt prints 0x%zx).
      {"0x7f0000", true, 0x7f0000, nullptr, 0},
      {"0x123", true, 0x123, nullptr, 0},
      {"0x0", true, 0, nullptr, 0},
      {"0x000000000000000001", true, 1, nullptr, 0},
      {"0x00000000000000000000ffffffffffffffff", true, UINT64_MAX, nullptr, 0},
      {"", false, 0, "empty field", 0},
      {"12", false, 0, "expected 0x and hex digits", 0},
      {"0X12", false, 0, "expected 0x and hex digits", 0},  // llvm-symbolizer wants a lower-case x here
      {"0x", false, 0, "no hex digits after 0x", 2},
      {"0x12g4", false, 0, "not a hex digit", 4},
      {"0x112233445566778899", false, 0, "value does not fit in 64 bits", 2},
  };
  expect_integer_cases(parse_address_field, cases);
}

TEST(MarkupFields, HexBytes) {
  std::vector<uint8_t> bytes;
  const char* error = nullptr;
  size_t offset = 0;
  EXPECT_TRUE(parse_hex_bytes_field("83238aB56bA10497", bytes, error, offset));
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0x83, 0x23, 0x8a, 0xb5, 0x6b, 0xa1, 0x04, 0x97}));
  bytes.clear();
  EXPECT_FALSE(parse_hex_bytes_field("", bytes, error, offset));
  EXPECT_STREQ(error, "empty field");
  // An odd number of digits reads as if a 0 came first, as llvm-symbolizer reads build IDs.
  EXPECT_TRUE(parse_hex_bytes_field("abc", bytes, error, offset));
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0x0a, 0xbc}));
  bytes.clear();
  EXPECT_TRUE(parse_hex_bytes_field("F", bytes, error, offset));
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0x0f}));
  bytes.clear();
  EXPECT_FALSE(parse_hex_bytes_field("0x12", bytes, error, offset));
  EXPECT_STREQ(error, "not a hex digit");
  EXPECT_EQ(offset, 1u);
  EXPECT_TRUE(bytes.empty());
}

// --------------------------------------------------------------------------------------------- elements

Node only_element(std::string_view line) {
  std::optional<Node> node = sole_element(line);
  EXPECT_TRUE(node) << line;
  return node ? *node : Node{};
}

TEST(MarkupElements, SeedExamples) {
  ParseError error;
  Node module_node = only_element("{{{module:1:libc.so:elf:83238ab56ba10497}}}");
  ModuleElement module;
  ASSERT_TRUE(parse_module(module_node, module, error)) << error.message;
  EXPECT_EQ(module.id, 1u);
  EXPECT_EQ(module.name, "libc.so");
  EXPECT_EQ(module.type, "elf");
  EXPECT_EQ(module.build_id, (std::vector<uint8_t>{0x83, 0x23, 0x8a, 0xb5, 0x6b, 0xa1, 0x04, 0x97}));

  MmapElement mmap;
  ASSERT_TRUE(parse_mmap(only_element("{{{mmap:0x7acba69d5000:0x5a000:load:1:rx:0x1000}}}"), mmap, error))
      << error.message;
  EXPECT_EQ(mmap.start, 0x7acba69d5000u);
  EXPECT_EQ(mmap.size, 0x5a000u);
  EXPECT_EQ(mmap.type, "load");
  EXPECT_EQ(mmap.module_id, 1u);
  EXPECT_TRUE(mmap.readable);
  EXPECT_FALSE(mmap.writable);
  EXPECT_TRUE(mmap.executable);
  EXPECT_EQ(mmap.module_relative_address, 0x1000u);

  BtElement bt;
  ASSERT_TRUE(parse_bt(only_element("{{{bt:0:0x12345678:pc}}}"), bt, error));
  EXPECT_EQ(bt.frame, 0u);
  EXPECT_EQ(bt.address, 0x12345678u);
  EXPECT_EQ(bt.kind, CodeKind::kPc);
  ASSERT_TRUE(parse_bt(only_element("{{{bt:1:0xffffffff9abcdef0:ra}}}"), bt, error));
  EXPECT_EQ(bt.frame, 1u);
  EXPECT_EQ(bt.address, 0xffffffff9abcdef0u);
  EXPECT_EQ(bt.kind, CodeKind::kRa);

  PcElement pc;
  ASSERT_TRUE(parse_pc(only_element("{{{pc:0x12345678}}}"), pc, error));
  EXPECT_EQ(pc.address, 0x12345678u);
  EXPECT_EQ(pc.kind, CodeKind::kUnknown);
  ASSERT_TRUE(parse_pc(only_element("{{{pc:0xffffffff9abcdef0}}}"), pc, error));
  EXPECT_EQ(pc.address, 0xffffffff9abcdef0u);

  EXPECT_TRUE(parse_reset(only_element("{{{reset}}}"), error));

  // Elements this project does not interpret still tokenize.
  EXPECT_EQ(describe("{{{symbol:_ZN7Mangled4NameEv}}}"), "E'symbol'[_ZN7Mangled4NameEv]@0");
  EXPECT_EQ(describe("{{{data:0xffffffff9abcdef0}}}"), "E'data'[0xffffffff9abcdef0]@0");
  EXPECT_EQ(describe("{{{dumpfile:sancov:sancov.8675}}}"), "E'dumpfile'[sancov|sancov.8675]@0");
}

TEST(MarkupElements, AcceptedVariants) {
  ParseError error;
  MmapElement mmap;
  ASSERT_TRUE(parse_mmap(only_element("{{{mmap:0:4096:load:0x2:RwX:0}}}"), mmap, error)) << error.message;
  EXPECT_EQ(mmap.size, 4096u);
  EXPECT_EQ(mmap.module_id, 2u);
  EXPECT_TRUE(mmap.readable && mmap.writable && mmap.executable);
  // A region may end exactly at the top of the address space.
  EXPECT_TRUE(parse_mmap(only_element("{{{mmap:0xffffffffffff0000:0x10000:load:1:r:0x00}}}"), mmap, error));
  ModuleElement module;
  ASSERT_TRUE(parse_module(only_element("{{{module:010::elf:00}}}"), module, error)) << error.message;
  EXPECT_EQ(module.id, 8u);
  EXPECT_EQ(module.name, "");
  BtElement bt;
  ASSERT_TRUE(parse_bt(only_element("{{{bt:3:0}}}"), bt, error));
  EXPECT_EQ(bt.address, 0u);
  EXPECT_EQ(bt.kind, CodeKind::kUnknown);
}

// Whatever llvm-symbolizer --filter-markup accepts (checked against llvm-symbolizer-19), this
// reader accepts: it is the consumer resolve-backtrace feeds.
TEST(MarkupElements, AcceptedAsLlvmSymbolizerAcceptsThem) {
  ParseError error;
  MmapElement mmap;
  // compiler-rt's sanitizers print mmap elements with 0x%zx: odd digit counts.
  ASSERT_TRUE(parse_mmap(only_element("{{{mmap:0x7f0000:0x1000:load:0:rx:0x0}}}"), mmap, error)) << error.message;
  EXPECT_EQ(mmap.start, 0x7f0000u);
  EXPECT_EQ(mmap.module_relative_address, 0u);
  ASSERT_TRUE(parse_mmap(only_element("{{{mmap:0x0000000000000000001000:0B1:load:0o7:R:0x1000:extra}}}"), mmap, error))
      << error.message;
  EXPECT_EQ(mmap.start, 0x1000u);
  EXPECT_EQ(mmap.size, 1u);
  EXPECT_EQ(mmap.module_id, 7u);
  // A region past the end of the address space (llvm-symbolizer takes it; it covers nothing past the end).
  EXPECT_TRUE(parse_mmap(only_element("{{{mmap:0xffffffffffff0000:0x10001:load:1:r:0x00}}}"), mmap, error));

  ModuleElement module;
  ASSERT_TRUE(parse_module(only_element("{{{module:0X1:a}b\t\033[31m:elf:123:extra}}}"), module, error))
      << error.message;
  EXPECT_EQ(module.id, 1u);
  EXPECT_EQ(module.name, "a}b\t\033[31m");
  EXPECT_EQ(module.build_id, (std::vector<uint8_t>{0x01, 0x23}));

  EXPECT_TRUE(parse_reset(only_element("{{{reset:extra}}}"), error));

  BtElement bt;
  ASSERT_TRUE(parse_bt(only_element("{{{bt:01:0x123}}}"), bt, error));
  EXPECT_EQ(bt.frame, 1u);
  EXPECT_EQ(bt.address, 0x123u);
  // A fourth field is ignored, and so is the third then (llvm-symbolizer reads the kind only as the last field).
  ASSERT_TRUE(parse_bt(only_element("{{{bt:1:0x10:xx:yy}}}"), bt, error));
  EXPECT_EQ(bt.kind, CodeKind::kUnknown);
  PcElement pc;
  ASSERT_TRUE(parse_pc(only_element("{{{pc:0x000000000000000001:pc:x}}}"), pc, error));
  EXPECT_EQ(pc.address, 1u);
  EXPECT_EQ(pc.kind, CodeKind::kUnknown);
}

enum class Parser { kReset, kModule, kMmap, kBt, kPc };

struct BadElement {
  const char* line;
  Parser parser;
  const char* message;
  size_t column;
};

bool run(Parser parser, const Node& node, ParseError& error) {
  ModuleElement module;
  MmapElement mmap;
  BtElement bt;
  PcElement pc;
  switch (parser) {
    case Parser::kReset: return parse_reset(node, error);
    case Parser::kModule: return parse_module(node, module, error);
    case Parser::kMmap: return parse_mmap(node, mmap, error);
    case Parser::kBt: return parse_bt(node, bt, error);
    case Parser::kPc: return parse_pc(node, pc, error);
  }
  return false;
}

TEST(MarkupElements, MalformedFieldsWithColumns) {
  const BadElement cases[] = {
      {"{{{pc:0x10}}}", Parser::kReset, "expected a reset element", 0},
      {"{{{pc:0x10000000000000000}}}", Parser::kPc, "pc: bad address: value does not fit in 64 bits", 8},
      {"{{{pc:0X10}}}", Parser::kPc, "pc: bad address: expected 0x and hex digits", 6},
      {"{{{module:0b2:x:elf:00}}}", Parser::kModule, "module: bad ID: not a binary digit", 12},
      {"  {{{bt:x:0x10}}}", Parser::kBt, "bt: bad frame number: not a decimal digit", 8},
      {"{{{bt:1:123}}}", Parser::kBt, "bt: bad address: expected 0x and hex digits", 8},
      {"{{{bt:1:0x10:xx}}}", Parser::kBt, "bt: expected \"pc\" or \"ra\" after the address", 13},
      {"{{{bt:1}}}", Parser::kBt, "bt: expected 2 or 3 fields (frame, address, pc or ra), found 1 field", 0},
      {"{{{pc:0x10}}}", Parser::kBt, "expected a bt element", 0},
      {"{{{pc:0x0g}}}", Parser::kPc, "pc: bad address: not a hex digit", 9},
      {"{{{pc:0x}}}", Parser::kPc, "pc: bad address: no hex digits after 0x", 8},
      {"{{{pc:}}}", Parser::kPc, "pc: bad address: empty field", 6},
      {"{{{pc:a}b}}}", Parser::kPc, "pc: bad address: expected 0x and hex digits", 6},
      {"{{{module:1:x:elf:}}}", Parser::kModule, "module: bad build ID: empty field", 18},
      {"{{{module:1:x:elf:0z}}}", Parser::kModule, "module: bad build ID: not a hex digit", 19},
      {"{{{module:08:x:elf:00}}}", Parser::kModule, "module: bad ID: not an octal digit", 11},
      {"{{{module::x:elf:00}}}", Parser::kModule, "module: bad ID: empty field", 10},
      {"{{{module:1:x:coff:00}}}", Parser::kModule, "module: unsupported module type", 14},
      {"{{{module:1:x}}}", Parser::kModule,
       "module: expected ID, name, type and type fields, found 2 fields", 0},
      {"{{{module:1:x:elf}}}", Parser::kModule,
       "module: expected 4 fields (ID, name, elf, build ID), found 3 fields", 0},
      {"{{{mmap:1000:0x2000:load:1:r:0x00}}}", Parser::kMmap,
       "mmap: bad start address: expected 0x and hex digits", 8},
      {"{{{mmap:0x1000:0x:load:1:r:0x00}}}", Parser::kMmap, "mmap: bad size: no hex digits after 0x", 17},
      {"{{{mmap:0x1000:0x1000:load:x:r:0x00}}}", Parser::kMmap, "mmap: bad module ID: not a decimal digit", 27},
      {"{{{mmap:0x1000:0x1000:load:1:xr:0x00}}}", Parser::kMmap,
       "mmap: bad flags: r, w and x must appear at most once, in that order", 30},
      {"{{{mmap:0x1000:0x1000:load:1:rr:0x00}}}", Parser::kMmap,
       "mmap: bad flags: r, w and x must appear at most once, in that order", 30},
      {"{{{mmap:0x1000:0x1000:load:1:rwq:0x00}}}", Parser::kMmap, "mmap: bad flags: expected r, w or x", 31},
      {"{{{mmap:0x1000:0x1000:load:1::0x00}}}", Parser::kMmap, "mmap: bad flags: empty field", 29},
      {"{{{mmap:0x1000:0x1000:store:1:r:0x00}}}", Parser::kMmap, "mmap: unsupported mmap type", 22},
      {"{{{mmap:0x1000:0x1000}}}", Parser::kMmap,
       "mmap: expected start, size, type and type fields, found 2 fields", 0},
      {"{{{mmap:0x1000:0x1000:load:1:r}}}", Parser::kMmap,
       "mmap: expected 6 fields (start, size, load, module, flags, address), found 5 fields", 0},
  };
  for (const BadElement& c : cases) {
    Node node = only_element(c.line);
    ParseError error;
    EXPECT_FALSE(run(c.parser, node, error)) << c.line;
    EXPECT_EQ(error.message, c.message) << c.line;
    EXPECT_EQ(error.column, c.column) << c.line;
  }
}

TEST(MarkupElements, TextNodeIsNotAnElement) {
  Tokenizer tokenizer("just text");
  Node node;
  ASSERT_TRUE(tokenizer.next(node));
  ParseError error;
  EXPECT_FALSE(parse_reset(node, error));
  EXPECT_EQ(error.message, "expected a reset element");
  EXPECT_FALSE(tokenizer.next(node));
}

TEST(MarkupTokenizer, RandomLinesAreCoveredExactlyAndNeverBreakTheParsers) {
  // Lines built from element-like fragments: the nodes tile the line, elements look like elements, and every
  // parser either accepts or reports a column inside the line.
  const char* const kPieces[] = {"{{{", "}}}", "{", "}", ":", "0x", "00", "1f", "bt", "pc", "ra", "mmap", "module",
                                 "reset", "load", "elf", "rwx", " ", "Z", "\t", "0", "9"};
  std::mt19937 random(2718);
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string line;
    for (size_t i = random() % 24; i > 0; --i) line += kPieces[random() % std::size(kPieces)];
    std::string joined;
    for (const Node& node : tokenize(line)) {
      ASSERT_EQ(node.column, joined.size()) << line;
      ASSERT_FALSE(node.text.empty()) << line;
      joined += node.text;
      if (!node.is_element()) continue;
      ASSERT_EQ(node.text.substr(0, 3), "{{{") << line;
      ASSERT_EQ(node.text.substr(node.text.size() - 3), "}}}") << line;
      ParseError error;
      for (Parser parser : {Parser::kReset, Parser::kModule, Parser::kMmap, Parser::kBt, Parser::kPc}) {
        if (!run(parser, node, error)) {
          EXPECT_LT(error.column, line.size()) << line;
          EXPECT_FALSE(error.message.empty()) << line;
        }
      }
    }
    ASSERT_EQ(joined, line);
  }
}

// ------------------------------------------------------------------------------------------ multi-line parser

/// Every node the parser gives for each line, described; "|" between lines, "$" for finish().
std::string parse_lines(MarkupParser& parser, const std::vector<std::string>& lines) {
  std::string out;
  Node node;
  for (const std::string& line : lines) {
    parser.begin_line(line);
    std::vector<Node> nodes;
    while (parser.next(node)) nodes.push_back(node);
    if (!out.empty()) out += " | ";
    out += describe(nodes);
    if (parser.inside_element()) out += " +";
  }
  if (parser.finish(node)) out += " $ T'" + std::string(node.text) + "'";
  return out;
}

// Elements that span lines (Symbolizer Markup Format, hexdict) are read, as llvm-symbolizer's MarkupParser reads
// them, not taken line by line as text.
TEST(MarkupParser, ElementsThatSpanLines) {
  MarkupParser parser;
  std::vector<std::string> lines = {"regs {{{hexdict:", "  CS: 0 RIP: 0x6ee17076fb80", "  R8: 0x3b }}} after {{{pc:0x10}}}",
                                    "plain"};
  EXPECT_EQ(parse_lines(parser, lines),
            "T'regs '@0 + |  + | E'hexdict'[\n  CS| 0 RIP| 0x6ee17076fb80\n  R8| 0x3b ]@0 T' after '@14 "
            "E'pc'[0x10]@21 | T'plain'@0");
  // Complete elements before the opening one come out first; an element that is not registered does not span.
  EXPECT_EQ(parse_lines(parser, {"{{{bt:0:0x10}}} {{{hexdict:", "}}}"}),
            "E'bt'[0|0x10]@0 T' '@15 + | E'hexdict'[\n]@0");
  EXPECT_EQ(parse_lines(parser, {"{{{pc:0x10", "}}}"}), "T'{{{pc:0x10'@0 | T'}}}'@0");
  // A "}}}" after the opening, or no ':' after the tag: not an opening.
  EXPECT_EQ(parse_lines(parser, {"{{{hexdict:a }}}", "{{{hexdict"}), "E'hexdict'[a ]@0 | T'{{{hexdict'@0");
  // The input ends inside the element: it was never one, and is given back as text (llvm-symbolizer's flush).
  EXPECT_EQ(parse_lines(parser, {"x {{{hexdict:", "  A: 0x1"}), "T'x '@0 + |  + $ T'{{{hexdict:\n  A: 0x1'");
}

TEST(MarkupParser, LinesInsideAreMarkedAndResetForgetsTheElement) {
  MarkupParser parser({"dump"});
  Node node;
  parser.begin_line("{{{dump:");
  EXPECT_FALSE(parser.line_started_inside());
  EXPECT_TRUE(parser.inside_element());
  parser.begin_line("signal:11:SIGSEGV");
  EXPECT_FALSE(parser.next(node));
  EXPECT_TRUE(parser.line_started_inside());
  EXPECT_TRUE(parser.inside_element());
  parser.reset();
  EXPECT_FALSE(parser.inside_element());
  EXPECT_FALSE(parser.finish(node));
  // The default tags are the Symbolizer Markup Format's (hexdict); others are plain text.
  MarkupParser plain;
  EXPECT_EQ(parse_lines(plain, {"{{{dump:", "}}}"}), "T'{{{dump:'@0 | T'}}}'@0");
}

// ------------------------------------------------------------------------------------------- round trips

TEST(MarkupRoundTrip, WriterOutputParsesBack) {
  std::mt19937_64 random(314159);
  const char* const kFlags[] = {"r", "rw", "rx", "rwx", "w", "x", "wx"};
  for (int iteration = 0; iteration < 2000; ++iteration) {
    uint64_t a = random() >> (random() % 64), b = random() >> (random() % 64), c = random() >> (random() % 64);
    ParseError error;

    std::string name;
    for (size_t i = random() % 20; i > 0; --i) name += static_cast<char>(random() % 128);
    std::vector<uint8_t> build_id(1 + random() % 20);
    for (uint8_t& byte : build_id) byte = static_cast<uint8_t>(random());
    std::string line = written([&](CharBuffer& out) {
      write_module(out, a, name.data(), name.size(), build_id.data(), build_id.size());
    });
    ModuleElement module;
    ASSERT_TRUE(parse_module(only_element(line), module, error)) << line << ": " << error.message;
    EXPECT_EQ(module.id, a);
    EXPECT_EQ(module.build_id, build_id);
    ASSERT_EQ(module.name.size(), name.size());

    const char* flags = kFlags[random() % 7];
    uint64_t size = b % (UINT64_MAX - a + 1 == 0 ? UINT64_MAX : UINT64_MAX - a + 1);
    line = written([&](CharBuffer& out) { write_mmap(out, a, size, b, flags, c); });
    MmapElement mmap;
    ASSERT_TRUE(parse_mmap(only_element(line), mmap, error)) << line << ": " << error.message;
    EXPECT_EQ(mmap.start, a);
    EXPECT_EQ(mmap.size, size);
    EXPECT_EQ(mmap.module_id, b);
    EXPECT_EQ(mmap.module_relative_address, c);
    EXPECT_EQ(mmap.readable, strchr(flags, 'r') != nullptr);
    EXPECT_EQ(mmap.writable, strchr(flags, 'w') != nullptr);
    EXPECT_EQ(mmap.executable, strchr(flags, 'x') != nullptr);

    CodeKind kind = static_cast<CodeKind>(random() % 3);
    line = written([&](CharBuffer& out) { write_bt(out, a, b, kind); });
    BtElement bt;
    ASSERT_TRUE(parse_bt(only_element(line), bt, error)) << line << ": " << error.message;
    EXPECT_EQ(bt.frame, a);
    EXPECT_EQ(bt.address, b);
    EXPECT_EQ(bt.kind, kind);

    line = written([&](CharBuffer& out) { write_pc(out, c, kind); });
    PcElement pc;
    ASSERT_TRUE(parse_pc(only_element(line), pc, error)) << line << ": " << error.message;
    EXPECT_EQ(pc.address, c);
    EXPECT_EQ(pc.kind, kind);
  }
}

TEST(MarkupRoundTrip, ContextualLinesOfACrashReport) {
  const uint8_t build_id[] = {0xde, 0xad, 0xbe, 0xef};
  std::vector<std::string> lines = {
      written([](CharBuffer& out) { write_reset(out); }),
      written([&](CharBuffer& out) { write_module(out, 0, "/usr/bin/app", 12, build_id, 4); }),
      written([](CharBuffer& out) { write_mmap(out, 0x555555554000, 0x1000, 0, "r", 0); }),
      written([](CharBuffer& out) { write_mmap(out, 0x555555555000, 0x3000, 0, "rx", 0x1000); }),
  };
  for (const std::string& line : lines) {
    std::optional<Node> node = sole_element(line);
    ASSERT_TRUE(node) << line;
    EXPECT_TRUE(is_contextual_tag(node->tag)) << line;
  }
}

}  // namespace
}  // namespace sampler::markup
