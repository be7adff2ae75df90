// symbfile writing (symbols/symbfile.h) read back by a protobuf reader written here from symbfile.proto's field
// numbers: a hand-made function with inlined calls, then a real binary (the crashing example, -O2 -g): the
// inline chain the ranges give for many addresses equals the GSYM lookup's, and the return pads are exactly the
// instructions that follow the calls objdump -d shows.
#include "symbols/symbfile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sections/gsym.h"
#include "sections/symbfile.h"
#include "symbols/dwarf_to_gsym.h"
#include "symbols/llvm_demangle.h"

namespace sampler::symbols {
namespace {

// ---- a protobuf reader: varints, length-delimited fields, packed uint32 (all a symbfile uses)
struct Cursor {
  std::string_view data;
  size_t at = 0;
  bool done() const { return at >= data.size(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (unsigned shift = 0; at < data.size(); shift += 7) {
      const auto b = static_cast<uint8_t>(data[at++]);
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
    ADD_FAILURE() << "truncated varint";
    return 0;
  }
  std::string_view bytes() {
    const uint64_t n = varint();
    if (n > data.size() - at) {
      ADD_FAILURE() << "truncated field";
      at = data.size();
      return {};
    }
    std::string_view v = data.substr(at, n);
    at += n;
    return v;
  }
};

/// Field number -> values (varints as numbers, length-delimited as bytes).
struct Fields {
  std::multimap<uint32_t, uint64_t> numbers;
  std::multimap<uint32_t, std::string> strings;
  uint64_t number(uint32_t f) const {
    auto it = numbers.find(f);
    return it == numbers.end() ? 0 : it->second;
  }
  std::string string(uint32_t f) const {
    auto it = strings.find(f);
    return it == strings.end() ? "" : it->second;
  }
  std::vector<uint32_t> packed(uint32_t f) const {
    std::vector<uint32_t> out;
    const std::string bytes = string(f);  // the cursor views it: it must outlive the loop
    Cursor c{bytes};
    while (!c.done()) out.push_back(static_cast<uint32_t>(c.varint()));
    return out;
  }
};

Fields parse_fields(std::string_view message) {
  Fields fields;
  Cursor c{message};
  while (!c.done()) {
    const uint64_t key = c.varint();
    const auto field = static_cast<uint32_t>(key >> 3);
    if ((key & 7) == 0) {
      fields.numbers.emplace(field, c.varint());
    } else if ((key & 7) == 2) {
      fields.strings.emplace(field, std::string(c.bytes()));
    } else {
      ADD_FAILURE() << "unexpected wire type " << (key & 7);
      break;
    }
  }
  return fields;
}

/// The messages of a symbfile, in order: (type, fields).
std::vector<std::pair<uint32_t, Fields>> read_symbfile(const std::string& file) {
  std::vector<std::pair<uint32_t, Fields>> out;
  EXPECT_EQ(file.substr(0, 8), "symbfile");
  Cursor c{std::string_view(file).substr(8)};
  while (!c.done()) {
    const uint64_t length = c.varint();
    const auto type = static_cast<uint32_t>(c.varint());
    if (length > c.data.size() - c.at) {
      ADD_FAILURE() << "truncated message";
      break;
    }
    out.emplace_back(type, parse_fields(c.data.substr(c.at, length)));
    c.at += length;
  }
  return out;
}

struct Range {
  uint64_t start, length;
  std::string func, file, call_file;
  uint32_t call_line, depth;
  std::vector<uint32_t> offsets, lines;
};

std::vector<Range> ranges_of(const std::string& file) {
  std::vector<Range> out;
  auto messages = read_symbfile(file);
  EXPECT_FALSE(messages.empty());
  EXPECT_EQ(messages.front().first, 1u);  // the header first
  for (const auto& [type, f] : messages) {
    if (type != 2) continue;
    Fields table = parse_fields(f.string(8));
    out.push_back({f.number(12), f.number(2), f.string(3), f.string(4), f.string(6),
                   static_cast<uint32_t>(f.number(5)), static_cast<uint32_t>(f.number(7)), table.packed(1),
                   table.packed(2)});
  }
  return out;
}

TEST(Symbfile, RangesOfAFunctionWithInlinedCalls) {
  Function f{0x1000, 0x40, "_Z4mainv", {{0x1000, "/s/a.c", 10}, {0x1010, "/s/b.h", 3}, {0x1030, "/s/a.c", 12}}, {}};
  InlineCall inner{{{0x1010, 0x1020}}, "_Z5innerv", "/s/a.c", 11, {}};
  inner.children.push_back({{{0x1014, 0x1018}}, "leaf", "/s/b.h", 4, {}});
  f.inlined.push_back(inner);
  const std::vector<Range> ranges = ranges_of(write_symbfile_ranges({f}));
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].func, "main()");
  EXPECT_EQ(ranges[0].start, 0x1000u);
  EXPECT_EQ(ranges[0].length, 0x40u);
  EXPECT_EQ(ranges[0].depth, 0u);
  EXPECT_EQ(ranges[0].file, "/s/a.c");
  // Rows the inlined call covers are left out: 0x1000 line 10, then 0x1030 line 12.
  EXPECT_EQ(ranges[0].offsets, (std::vector<uint32_t>{0, 0x30}));
  EXPECT_EQ(ranges[0].lines, (std::vector<uint32_t>{10, 12}));
  EXPECT_EQ(ranges[1].func, "inner()");
  EXPECT_EQ(ranges[1].depth, 1u);
  EXPECT_EQ(ranges[1].call_line, 11u);
  EXPECT_EQ(ranges[1].call_file, "/s/a.c");
  EXPECT_EQ(ranges[1].offsets, (std::vector<uint32_t>{0}));
  EXPECT_EQ(ranges[1].lines, (std::vector<uint32_t>{3}));
  EXPECT_EQ(ranges[2].func, "leaf");
  EXPECT_EQ(ranges[2].depth, 2u);
  EXPECT_EQ(ranges[2].start, 0x1014u);
  EXPECT_EQ(ranges[2].call_line, 4u);
  EXPECT_EQ(ranges[2].lines, (std::vector<uint32_t>{3}));  // the row in force at its start
}

/// objdump -d's call instructions: the address of the instruction after each.
std::set<uint64_t> objdump_pads(const std::string& binary) {
  std::set<uint64_t> pads;
  const std::string command = std::string(SAMPLER_TEST_OBJDUMP) + " -d --no-show-raw-insn " + binary;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return pads;
  char line[4096];
  bool after_call = false;
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    unsigned long long address = 0;
    char mnemonic[64] = "";
    if (std::sscanf(line, " %llx: %63s", &address, mnemonic) == 2) {
      if (after_call) pads.insert(address);
      after_call = std::string(mnemonic).rfind("call", 0) == 0;
    } else if (std::string(line).rfind("Disassembly of section", 0) == 0) {
      after_call = false;  // a call ending a section is followed by no instruction (one ending a function is)
    }
  }
  pclose(pipe);
  return pads;
}

TEST(Symbfile, RealBinaryRoundTrips) {
  const std::string binary = SAMPLER_TEST_BINARY;
  DiagnosticList sink;
  DebugInfo info;
  ASSERT_TRUE(read_debug_info(binary, ConvertOptions{}, info, sink));
  const std::string ranges_file = write_symbfile_ranges(info.functions);
  const std::string gsym_bytes = write_gsym(info.functions, info.build_id);
  std::vector<uint64_t> pads;
  ASSERT_TRUE(find_return_pads(binary, pads, sink));
  const std::string pads_file = write_symbfile_returnpads(pads, gsym_bytes);
  EXPECT_EQ(sink.error_count(), 0u);

  gsym::Error error;
  auto reader = gsym::Reader::open(gsym_bytes, error);
  ASSERT_TRUE(reader);
  // The ranges: for addresses across every function, the records holding the address, by depth, name the same
  // chain as the GSYM lookup (outermost first).
  const std::vector<Range> ranges = ranges_of(ranges_file);
  size_t checked = 0;
  std::mt19937_64 random(7);
  for (const Function& f : info.functions) {
    for (int k = 0; k < 8; ++k) {
      const uint64_t a = f.start + random() % f.size;
      std::vector<const Range*> holding;
      for (const Range& r : ranges) {
        if (a >= r.start && a - r.start < r.length) holding.push_back(&r);
      }
      std::stable_sort(holding.begin(), holding.end(),
                       [](const Range* x, const Range* y) { return x->depth < y->depth; });
      gsym::LookupResult result;
      ASSERT_EQ(reader->lookup(a, result, error), gsym::Found::kYes) << std::hex << a;
      std::vector<std::string> expected;
      for (size_t i = result.frames.size(); i-- > 0;) expected.push_back(llvm_demangle(result.frames[i].name));
      // GSYM gives the inline chain only where a line row exists; there it must name the ranges' chain.
      if (!result.frames.front().file.empty() || holding.size() == 1) {
        std::vector<std::string> names;
        for (const Range* r : holding) names.push_back(r->func);
        EXPECT_EQ(names, expected) << std::hex << a;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 50u);

  // The return pads: exactly the instructions after calls (as objdump -d sees them), at their address minus one.
  std::set<uint64_t> written;
  std::vector<std::string> strings;
  size_t with_frames = 0;
  for (const auto& [type, f] : read_symbfile(pads_file)) {
    if (type == 4) {
      for (auto [it, end] = f.strings.equal_range(1); it != end; ++it) strings.push_back(it->second);
    } else if (type == 3) {
      const uint64_t at = f.number(5);
      written.insert(at + 1);
      const std::vector<uint32_t> funcs = f.packed(2);
      for (uint32_t s : funcs) ASSERT_LT(s, strings.size());
      gsym::LookupResult result;
      if (reader->lookup(at, result, error) == gsym::Found::kYes) {
        ASSERT_EQ(funcs.size(), result.frames.size()) << std::hex << at;
        EXPECT_EQ(strings[funcs.front()], llvm_demangle(result.frames.back().name)) << std::hex << at;
        ++with_frames;
      }
    }
  }
  EXPECT_EQ(written, objdump_pads(binary));
  EXPECT_GT(with_frames, 10u);

  // The formats library's reader (sections/symbfile.h, what the collector checks uploads with and symbolizes
  // from) answers like GSYM: every return pad with GSYM's whole chain, and the ranges with the same function
  // names, and the same lines wherever GSYM knows the line. A RangeV1 holds one file for its whole line table
  // (symbfile.proto), so the innermost frame's file is the range's first row's: rows of another file inside a
  // range (code from a header that DWARF does not call inlined) keep their lines but not their file.
  auto pads_read = symbfile::File::parse(pads_file, symbfile::Kind::kReturnPads, error);
  ASSERT_TRUE(pads_read) << error.offset << ": " << error.message;
  auto ranges_read = symbfile::File::parse(ranges_file, symbfile::Kind::kRanges, error);
  ASSERT_TRUE(ranges_read) << error.offset << ": " << error.message;
  EXPECT_EQ(pads_read->pad_count(), written.size());
  EXPECT_FALSE(symbfile::File::parse(pads_file, symbfile::Kind::kRanges, error));
  auto same = [](const gsym::LookupResult& ours, const gsym::LookupResult& theirs, bool lines, uint64_t at,
                 bool innermost_file = true) {
    ASSERT_EQ(ours.frames.size(), theirs.frames.size()) << std::hex << at;
    for (size_t i = 0; i < ours.frames.size(); ++i) {
      EXPECT_EQ(ours.frames[i].name, llvm_demangle(theirs.frames[i].name)) << std::hex << at << " frame " << i;
      if (!lines) continue;
      EXPECT_EQ(ours.frames[i].line, theirs.frames[i].line) << std::hex << at << " frame " << i;
      if (i == 0 && !innermost_file) continue;
      EXPECT_EQ(ours.frames[i].file, theirs.frames[i].file) << std::hex << at << " frame " << i;
      EXPECT_EQ(ours.frames[i].dir, theirs.frames[i].dir) << std::hex << at << " frame " << i;
    }
  };
  size_t pads_compared = 0, ranges_compared = 0;
  for (uint64_t pad : written) {
    gsym::LookupResult ours, theirs;
    if (reader->lookup(pad - 1, theirs, error) != gsym::Found::kYes) continue;
    ASSERT_TRUE(pads_read->lookup_pad(pad - 1, ours)) << std::hex << pad - 1;
    same(ours, theirs, true, pad - 1);
    ++pads_compared;
  }
  for (const Function& f : info.functions) {
    for (int k = 0; k < 8; ++k) {
      const uint64_t a = f.start + random() % f.size;
      gsym::LookupResult ours, theirs;
      ASSERT_EQ(reader->lookup(a, theirs, error), gsym::Found::kYes);
      if (theirs.frames.front().file.empty() && theirs.frames.size() > 1) continue;  // as above
      ASSERT_TRUE(ranges_read->lookup_ranges(a, ours)) << std::hex << a;
      same(ours, theirs, !theirs.frames.front().file.empty(), a, false);
      ++ranges_compared;
    }
  }
  EXPECT_GT(pads_compared, 10u);
  EXPECT_GT(ranges_compared, 50u);
}

}  // namespace
}  // namespace sampler::symbols
