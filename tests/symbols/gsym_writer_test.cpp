// The GSYM writer (symbols/gsym_writer.h) read back by the reader (sections/gsym.h): every row, every inline
// level, line deltas and address steps too big for special opcodes, address offset sizes, unsorted and duplicate
// input. The DWARF side is checked against llvm-symbolizer in tests/tools/gsym_test.sh.
#include "symbols/gsym_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sections/gsym.h"

namespace sampler::symbols {
namespace {

std::vector<std::string> look(const gsym::Reader& r, uint64_t address) {
  gsym::LookupResult result;
  gsym::Error error;
  const gsym::Found found = r.lookup(address, result, error);
  if (found == gsym::Found::kError) return {"error: " + error.message};
  if (found == gsym::Found::kNo) return {"none"};
  std::vector<std::string> out;
  for (const auto& f : result.frames) {
    out.push_back(std::string(f.name) + " " + std::string(f.dir) + "|" + std::string(f.file) + ":" +
                  std::to_string(f.line));
  }
  return out;
}

using V = std::vector<std::string>;

TEST(GsymWriter, RowsAndInlineTreeReadBack) {
  Function f;
  f.start = 0x401000;
  f.size = 0x100;
  f.name = "main";
  f.lines = {{0x401000, "/src/a.c", 10}, {0x401004, "/src/a.c", 11}, {0x401010, "/inc/b.h", 3},
             {0x401020, "/src/a.c", 500}, {0x401090, "/src/a.c", 2}, {0x4010ff, "a.c", 7}};
  InlineCall inner{{{0x401010, 0x401030}, {0x401040, 0x401050}}, "inner", "/src/a.c", 12, {}};
  inner.children.push_back({{{0x401020, 0x401028}}, "leaf", "/inc/b.h", 4, {}});
  f.inlined.push_back(inner);
  Function g{0x402000, 0x10, "other", {}, {}};
  const std::string bytes = write_gsym({g, f, g}, std::string("\xab\xcd", 2));
  gsym::Error error;
  auto r = gsym::Reader::open(bytes, error);
  ASSERT_TRUE(r) << error.message;
  ASSERT_TRUE(r->verify(error)) << error.offset << ": " << error.message;
  EXPECT_EQ(r->address_count(), 2u);
  EXPECT_EQ(r->uuid(), std::string("\xab\xcd", 2));
  EXPECT_EQ(look(*r, 0x400fff), V{"none"});
  EXPECT_EQ(look(*r, 0x401000), V{"main /src|a.c:10"});
  EXPECT_EQ(look(*r, 0x401007), V{"main /src|a.c:11"});
  EXPECT_EQ(look(*r, 0x401010), (V{"inner /inc|b.h:3", "main /src|a.c:12"}));
  EXPECT_EQ(look(*r, 0x401024), (V{"leaf /src|a.c:500", "inner /inc|b.h:4", "main /src|a.c:12"}));
  EXPECT_EQ(look(*r, 0x401030), V{"main /src|a.c:500"});
  EXPECT_EQ(look(*r, 0x401045), (V{"inner /src|a.c:500", "main /src|a.c:12"}));
  EXPECT_EQ(look(*r, 0x401090), V{"main /src|a.c:2"});
  EXPECT_EQ(look(*r, 0x4010ff), V{"main |a.c:7"});
  EXPECT_EQ(look(*r, 0x401100), V{"none"});
  EXPECT_EQ(look(*r, 0x402000), V{"other |:0"});
}

TEST(GsymWriter, AddressOffsetSizeFollowsTheSpan) {
  for (uint64_t span : {0x10ull, 0x1000ull, 0x100000ull, 0x100000000ull}) {
    const std::string bytes = write_gsym({{0x1000, 4, "a", {}, {}}, {0x1000 + span, 4, "b", {}, {}}}, "");
    gsym::Error error;
    auto r = gsym::Reader::open(bytes, error);
    ASSERT_TRUE(r) << error.message;
    const int expected = span <= 0xff ? 1 : span <= 0xffff ? 2 : span <= 0xffffffffu ? 4 : 8;
    EXPECT_EQ(static_cast<int>(bytes[6]), expected);
    EXPECT_EQ(look(*r, 0x1000 + span + 3), V{"b |:0"});
    EXPECT_EQ(look(*r, 0x1000 + span + 4), V{"none"});
  }
}

TEST(GsymWriter, EmptyFileHasNoAddresses) {
  const std::string bytes = write_gsym({}, "");
  gsym::Error error;
  auto r = gsym::Reader::open(bytes, error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->address_count(), 0u);
  EXPECT_EQ(look(*r, 0), V{"none"});
}

TEST(GsymWriter, ManyRowsEveryLineDelta) {
  // Deltas from -300 to +300 and address steps from 1 to 300: special opcodes and the long forms.
  Function f{0x10000, 0x100000, "f", {}, {}};
  uint64_t address = 0x10000;
  int64_t line = 1000;
  std::vector<std::pair<uint64_t, uint32_t>> expected;
  for (int i = 0; i < 600; ++i) {
    f.lines.push_back({address, "/x.c", static_cast<uint32_t>(line)});
    expected.push_back({address, static_cast<uint32_t>(line)});
    address += 1 + (i * 7) % 300;
    line += (i % 2 == 0 ? 1 : -1) * (i / 2);
  }
  const std::string bytes = write_gsym({f}, "");
  gsym::Error error;
  auto r = gsym::Reader::open(bytes, error);
  ASSERT_TRUE(r) << error.message;
  for (const auto& [a, l] : expected) {
    EXPECT_EQ(look(*r, a), V{"f |x.c:" + std::to_string(l)}) << std::hex << a;
  }
}

}  // namespace
}  // namespace sampler::symbols
