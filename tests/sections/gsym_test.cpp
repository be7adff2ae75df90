// GSYM reader (sections/gsym.h): files encoded by hand here, byte by byte as docs/formats.md lays them out, then
// looked up; and every kind of damage found with its byte offset. Files written by llvm-gsymutil and by
// sampler-symbols are checked against llvm-symbolizer in tests/tools/gsym_crosscheck.sh.
#include "sections/gsym.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sampler::gsym {
namespace {

/// Little-endian byte writer with LEB128.
struct Bytes {
  std::string data;
  void u8(uint64_t v) { data.push_back(static_cast<char>(v)); }
  void u16(uint64_t v) { for (int i = 0; i < 2; ++i) u8(v >> (8 * i) & 0xff); }
  void u32(uint64_t v) { for (int i = 0; i < 4; ++i) u8(v >> (8 * i) & 0xff); }
  void u64(uint64_t v) { for (int i = 0; i < 8; ++i) u8(v >> (8 * i) & 0xff); }
  void uleb(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      u8(b | (v ? 0x80 : 0));
    } while (v);
  }
  void sleb(int64_t v) {
    bool more = true;
    while (more) {
      uint8_t b = v & 0x7f;
      v >>= 7;
      more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
      u8(b | (more ? 0x80 : 0));
    }
  }
  void align4() { while (data.size() % 4) u8(0); }
};

// Strings: "" at 0, then these at fixed offsets.
const std::string kStrings = std::string("\0", 1) + "main" + '\0' + "inner" + '\0' + "/src" + '\0' + "a.c" + '\0' +
                             "b.h" + '\0' + "leaf" + '\0';
constexpr uint32_t kMain = 1, kInner = 6, kDir = 12, kAc = 17, kBh = 21, kLeaf = 25;

/// A file with two functions: main [0x1000, 0x1040) with a line table (a.c lines 10, 11 at 0x1010, b.h line 3 at
/// 0x1020) and an inline tree (inner [0x1020,0x1030) called from a.c:11, leaf [0x1024,0x1028) inside it called
/// from b.h:4); and leaf2 at 0x2000 (size 0x10, no records).
std::string sample_file(uint8_t address_size = 2) {
  Bytes f;
  const uint32_t count = 2;
  // The function infos are placed after the string table; compute offsets in two passes.
  Bytes info1;
  info1.u32(0x40);
  info1.u32(kMain);
  Bytes lt;
  lt.sleb(-1);
  lt.sleb(2);
  lt.uleb(10);   // first line 10, file 1
  lt.u8(2);      // advance pc 0: push 0x1000 a.c:10
  lt.uleb(0);
  lt.u8(3);      // advance line +1
  lt.sleb(1);
  lt.u8(2);      // push 0x1010 a.c:11
  lt.uleb(0x10);
  lt.u8(1);      // set file 2 (b.h)
  lt.uleb(2);
  // special: line delta -8 not in range -> advance line then pc
  lt.u8(3);
  lt.sleb(-8);
  lt.u8(2);      // push 0x1020 b.h:3
  lt.uleb(0x10);
  // special opcode: line +1, addr +4: adjusted = (1 - -1) + 4 * 4 = 18 -> op 22: push 0x1024 b.h:4
  lt.u8(22);
  lt.u8(0);
  info1.u32(1);
  info1.u32(lt.data.size());
  info1.data += lt.data;
  Bytes in;
  in.uleb(1);  // main's own range
  in.uleb(0);
  in.uleb(0x40);
  in.u8(1);
  in.u32(kMain);
  in.uleb(0);
  in.uleb(0);
  in.uleb(1);  // inner: [0x1020, 0x1030), relative to 0x1000
  in.uleb(0x20);
  in.uleb(0x10);
  in.u8(1);
  in.u32(kInner);
  in.uleb(1);  // called from a.c:11
  in.uleb(11);
  in.uleb(1);  // leaf: [0x1024, 0x1028), relative to inner's 0x1020
  in.uleb(4);
  in.uleb(4);
  in.u8(0);
  in.u32(kLeaf);
  in.uleb(2);  // called from b.h:4
  in.uleb(4);
  in.uleb(0);  // end of inner's children
  in.uleb(0);  // end of main's children
  info1.u32(2);
  info1.u32(in.data.size());
  info1.data += in.data;
  info1.u32(0);
  info1.u32(0);
  Bytes info2;
  info2.u32(0x10);
  info2.u32(kLeaf);
  info2.u32(0);
  info2.u32(0);

  const uint64_t base = 0x1000;
  f.u32(kMagic);
  f.u16(1);
  f.u8(address_size);
  f.u8(4);
  f.u64(base);
  f.u32(count);
  const size_t strtab_field = f.data.size();
  f.u32(0);
  f.u32(kStrings.size());
  f.data += std::string("\x01\x02\x03\x04", 4) + std::string(16, '\0');
  auto address = [&](uint64_t v) { for (int i = 0; i < address_size; ++i) f.u8(v >> (8 * i) & 0xff); };
  address(0);
  address(0x1000);
  f.align4();
  const size_t offsets = f.data.size();
  f.u32(0);
  f.u32(0);
  f.u32(3);  // files: 0 empty, 1 /src/a.c, 2 /src/b.h
  f.u32(0);
  f.u32(0);
  f.u32(kDir);
  f.u32(kAc);
  f.u32(kDir);
  f.u32(kBh);
  const size_t strtab = f.data.size();
  f.data += kStrings;
  f.align4();
  const size_t at1 = f.data.size();
  f.data += info1.data;
  f.align4();
  const size_t at2 = f.data.size();
  f.data += info2.data;
  auto patch32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) f.data[at + i] = static_cast<char>(v >> (8 * i));
  };
  patch32(strtab_field, strtab);
  patch32(offsets, at1);
  patch32(offsets + 4, at2);
  return f.data;
}

std::string frame_text(const Location& l) {
  return std::string(l.name) + " " + std::string(l.dir) + "/" + std::string(l.file) + ":" + std::to_string(l.line);
}

std::vector<std::string> look(const Reader& r, uint64_t address) {
  LookupResult result;
  Error error;
  Found found = r.lookup(address, result, error);
  if (found == Found::kError) return {"error at " + std::to_string(error.offset) + ": " + error.message};
  if (found == Found::kNo) return {"none"};
  std::vector<std::string> frames;
  for (const auto& l : result.frames) frames.push_back(frame_text(l));
  return frames;
}

TEST(Gsym, HeaderFields) {
  const std::string file = sample_file();
  Error error;
  auto r = Reader::open(file, error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->base_address(), 0x1000u);
  EXPECT_EQ(r->address_count(), 2u);
  EXPECT_EQ(r->address_at(1), 0x2000u);
  EXPECT_EQ(r->uuid(), std::string("\x01\x02\x03\x04", 4));
  EXPECT_TRUE(r->verify(error)) << error.message;
}

TEST(Gsym, LookupsFollowLineTableAndInlineTree) {
  for (uint8_t size : {2, 4, 8}) {
    const std::string file = sample_file(size);
    Error error;
    auto r = Reader::open(file, error);
    ASSERT_TRUE(r) << error.message;
    using V = std::vector<std::string>;
    EXPECT_EQ(look(*r, 0xfff), V{"none"});
    EXPECT_EQ(look(*r, 0x1000), V{"main /src/a.c:10"});
    EXPECT_EQ(look(*r, 0x100f), V{"main /src/a.c:10"});
    EXPECT_EQ(look(*r, 0x1010), V{"main /src/a.c:11"});
    EXPECT_EQ(look(*r, 0x1020), (V{"inner /src/b.h:3", "main /src/a.c:11"}));
    EXPECT_EQ(look(*r, 0x1025), (V{"leaf /src/b.h:4", "inner /src/b.h:4", "main /src/a.c:11"}));
    EXPECT_EQ(look(*r, 0x1030), V{"main /src/b.h:4"});
    EXPECT_EQ(look(*r, 0x1040), V{"none"});  // the gap between the functions
    EXPECT_EQ(look(*r, 0x2000), V{"leaf /:0"});
    EXPECT_EQ(look(*r, 0x200f), V{"leaf /:0"});
    EXPECT_EQ(look(*r, 0x2010), V{"none"});
  }
}

TEST(Gsym, CachedLookupsAnswerAsUncached) {
  const std::string file = sample_file();
  Error error;
  auto r = Reader::open(file, error);
  ASSERT_TRUE(r) << error.message;
  LineTableCache cache(1);  // capacity 1: emptied on every other function, refilled
  for (int pass = 0; pass < 2; ++pass) {
    for (uint64_t a = 0xff0; a < 0x2020; ++a) {
      LookupResult plain;
      LookupResult cached;
      Error e1;
      Error e2;
      const Found f1 = r->lookup(a, plain, e1);
      const Found f2 = r->lookup(a, cached, e2, &cache);
      ASSERT_EQ(f1, f2) << std::hex << a;
      ASSERT_EQ(plain.frames.size(), cached.frames.size()) << std::hex << a;
      for (size_t i = 0; i < plain.frames.size(); ++i) {
        EXPECT_EQ(frame_text(plain.frames[i]), frame_text(cached.frames[i])) << std::hex << a;
      }
    }
  }
}

TEST(Gsym, BigEndianFileReadsAlike) {
  // A header-only big-endian file: magic and counts swapped.
  std::string file(48 + 4, '\0');
  const char header[] = "GSYM\0\x01\x04\x00";
  file.replace(0, 8, header, 8);
  Error error;
  auto r = Reader::open(file, error);
  ASSERT_TRUE(r) << error.message;
  EXPECT_EQ(r->address_count(), 0u);
  LookupResult result;
  EXPECT_EQ(r->lookup(0x1234, result, error), Found::kNo);
}

struct Damage {
  const char* what;
  size_t at;
  std::string bytes;
  uint64_t expected_offset;
  const char* message_part;
  bool at_open;
};

TEST(Gsym, MalformedFilesAreErrorsWithTheirOffset) {
  const std::string good = sample_file();
  // Offsets in sample_file(2): header 48, addresses 4 (48..52), info offsets at 52, file table at 60.
  const std::vector<Damage> table = {
      {"bad magic", 0, "XSYM", 0, "bad magic", true},
      {"version 2", 4, std::string("\x02\x00", 2), 4, "version 2", true},
      {"address size 3", 6, "\x03", 6, "address offset size 3", true},
      {"UUID size 21", 7, "\x15", 7, "UUID size 21", true},
      {"huge address count", 16, "\xff\xff\xff\x0f", 16, "address table", true},
      {"string table past the end", 24, "\xff\xff\x00\x00", 20, "string table", true},
      {"huge file count", 60, "\xff\xff\xff\xff", 60, "file table", true},
      {"info offset past the end", 52, "\xff\xff\x00\x00", 52, "past the end", false},
  };
  for (const auto& d : table) {
    std::string file = good;
    file.replace(d.at, d.bytes.size(), d.bytes);
    Error error;
    auto r = Reader::open(file, error);
    if (d.at_open) {
      ASSERT_FALSE(r) << d.what;
    } else {
      ASSERT_TRUE(r) << d.what;
      LookupResult result;
      ASSERT_EQ(r->lookup(0x1000, result, error), Found::kError) << d.what;
    }
    EXPECT_EQ(error.offset, d.expected_offset) << d.what;
    EXPECT_NE(error.message.find(d.message_part), std::string::npos) << d.what << ": " << error.message;
  }
}

TEST(Gsym, TruncationAnywhereIsAnErrorNeverACrash) {
  const std::string good = sample_file();
  for (size_t size = 0; size < good.size(); ++size) {
    const std::string file = good.substr(0, size);
    Error error;
    auto r = Reader::open(file, error);
    if (!r) {
      EXPECT_FALSE(error.message.empty());
      continue;
    }
    EXPECT_FALSE(r->verify(error)) << size;  // something is always missing
    EXPECT_LE(error.offset, good.size());
    for (uint64_t a : {0x1000, 0x1025, 0x2004}) {
      LookupResult result;
      if (r->lookup(a, result, error) == Found::kError) {
        EXPECT_LE(error.offset, good.size());
      }
    }
  }
}

TEST(Gsym, BadStringAndFileIndexesAreErrors) {
  std::string file = sample_file();
  Error error;
  auto r = Reader::open(file, error);
  ASSERT_TRUE(r);
  // The second function's name: point it past the string table.
  const uint32_t at2 = static_cast<uint8_t>(file[56]) | static_cast<uint8_t>(file[57]) << 8;
  file[at2 + 4] = '\x7f';
  r = Reader::open(file, error);
  ASSERT_TRUE(r);
  LookupResult result;
  ASSERT_EQ(r->lookup(0x2000, result, error), Found::kError);
  EXPECT_EQ(error.offset, at2 + 4);
  EXPECT_NE(error.message.find("string offset 127"), std::string::npos) << error.message;
  EXPECT_FALSE(r->verify(error));
}

TEST(Gsym, RowsPastTheFileTableAreErrorsWithOrWithoutACache) {
  // main's rows without a file opcode keep file 1 (its "set file 2" becomes "advance line 0"), and the file
  // table holds file 0 only: the line table decodes, but its rows name no file.
  std::string file = sample_file();
  const size_t set_file = file.find(std::string("\x02\x10\x01\x02", 4));
  ASSERT_NE(set_file, std::string::npos);
  file[set_file + 2] = '\x03';
  file[set_file + 3] = '\x00';
  ASSERT_EQ(file[60], '\x03');  // the file count, after the 48-byte header, 2 addresses and 2 offsets
  file[60] = '\x01';
  Error error;
  auto r = Reader::open(file, error);
  ASSERT_TRUE(r) << error.message;
  LineTableCache cache;
  for (int pass = 0; pass < 2; ++pass) {
    LookupResult plain;
    LookupResult cached;
    Error e1;
    Error e2;
    ASSERT_EQ(r->lookup(0x1004, plain, e1), Found::kError);
    ASSERT_EQ(r->lookup(0x1004, cached, e2, &cache), Found::kError);
    EXPECT_EQ(e1.message, "file index 1 past the file table (1 files)");
    EXPECT_EQ(e2.message, e1.message);
    EXPECT_EQ(e2.offset, e1.offset);
  }
}

TEST(Gsym, DeepInlineNestingIsBounded) {
  // main's inline info nests 10000 levels deep, each covering the address.
  Bytes in;
  for (int i = 0; i < 10000; ++i) {
    in.uleb(1);
    in.uleb(0);
    in.uleb(0x40);
    in.u8(1);
    in.u32(kMain);
    in.uleb(0);
    in.uleb(1);
  }
  Bytes f;
  f.u32(kMagic);
  f.u16(1);
  f.u8(1);
  f.u8(0);
  f.u64(0x1000);
  f.u32(1);
  f.u32(48 + 4 + 4 + 12);
  f.u32(kStrings.size());
  f.data += std::string(20, '\0');
  f.u8(0);
  f.align4();
  const size_t info = 48 + 4 + 4 + 12 + kStrings.size();
  f.u32(info);
  f.u32(1);
  f.u32(0);
  f.u32(0);
  f.data += kStrings;
  f.u32(0x40);
  f.u32(kMain);
  f.u32(1);  // a line table, so that the inline tree is used
  f.u32(8);  // deltas 0..0, first line 1, file 0, advance pc 0 (a row at the start), end
  for (int b : {0, 0, 1, 1, 0, 2, 0, 0}) f.u8(b);
  f.u32(2);
  f.u32(in.data.size());
  f.data += in.data;
  f.u32(0);
  f.u32(0);
  Error error;
  auto r = Reader::open(f.data, error);
  ASSERT_TRUE(r) << error.message;
  LookupResult result;
  ASSERT_EQ(r->lookup(0x1000, result, error), Found::kError);
  EXPECT_NE(error.message.find("nested deeper"), std::string::npos) << error.message;
  EXPECT_FALSE(r->verify(error));
}

}  // namespace
}  // namespace sampler::gsym
