// The in-process markup symbolizer (sections/symbolize_markup.h) over a GSYM file made by the writer: module map
// lines, frame lines with inlined calls, return addresses, modules without symbols, frames outside every mmap,
// input in arbitrary pieces. The comparison with llvm-symbolizer itself is in tests/tools/gsym_test.sh.
#include "sections/symbolize_markup.h"

#include <gtest/gtest.h>

#include <string>

#include "symbols/gsym_writer.h"

namespace sampler {
namespace {

class OneFile : public SymbolSource {
 public:
  explicit OneFile(std::string bytes) : bytes_(std::move(bytes)) {
    gsym::Error error;
    reader_ = gsym::Reader::open(bytes_, error);
  }
  const gsym::Reader* find(const std::vector<uint8_t>& build_id) override {
    return build_id == std::vector<uint8_t>{0xab, 0xcd} ? &*reader_ : nullptr;
  }

 private:
  std::string bytes_;
  std::optional<gsym::Reader> reader_;
};

std::string run(const std::string& input, size_t piece) {
  symbols::Function f{0x1000, 0x100, "_Z4mainv", {{0x1000, "/s/a.c", 10}, {0x1010, "/s/b.h", 3}}, {}};
  f.inlined.push_back({{{0x1010, 0x1020}}, "inl", "/s/a.c", 11, {}});
  OneFile source(symbols::write_gsym({f}, std::string("\xab\xcd", 2)));
  DiagnosticList sink;
  std::string out;
  MarkupSymbolizer symbolizer(source, [&out](std::string_view text) { out.append(text); }, sink);
  for (size_t at = 0; at < input.size(); at += piece) symbolizer.write(std::string_view(input).substr(at, piece));
  symbolizer.finish();
  EXPECT_EQ(sink.items.size(), 0u);
  return out;
}

TEST(MarkupSymbolizer, FramesAsLlvmSymbolizerPrintsThem) {
  const std::string input =
      "{{{reset}}}\n"
      "{{{module:0:app:elf:abcd}}}\n"
      "{{{mmap:0x7000:0x1000:load:0:r:0x00}}}\n"
      "{{{mmap:0x8000:0x1000:load:0:rx:0x1000}}}\n"
      "{{{module:1:libc.so.6:elf:0102}}}\n"
      "{{{mmap:0x020000:0x1000:load:1:rx:0x00}}}\n"
      "Crashed with signal 11 (SIGSEGV)\n"
      "{{{bt:0:0x8004:pc}}}\n"
      "{{{bt:1:0x8015:ra}}}\n"
      "{{{bt:2:0x020010:ra}}}\n"
      "{{{bt:3:0x090000:ra}}}\n"
      "{{{bt:4:0x8200}}}";
  const std::string expected =
      "[[[ELF module #0x0 \"app\"; BuildID=abcd [0x7000-0x7fff](r),[0x8000-0x8fff](rx)]]]\n"
      "[[[ELF module #0x1 \"libc.so.6\"; BuildID=0102 [0x20000-0x20fff](rx)]]]\n"
      "Crashed with signal 11 (SIGSEGV)\n"
      "    #0    0x0000000000008004 main() /s/a.c:10 (app+0x1004)\n"
      "    #1.1  0x0000000000008014 inl /s/b.h:3 (app+0x1014)\n"
      "    #1    0x0000000000008014 main() /s/a.c:11 (app+0x1014)\n"
      "    #2    0x000000000002000f (libc.so.6+0xf)\n"
      "[[[bt:3:0x090000:ra]]]\n"
      "    #4    0x00000000000081ff (app+0x11ff)\n";
  EXPECT_EQ(run(input, input.size()), expected);
  EXPECT_EQ(run(input, 1), expected);
  EXPECT_EQ(run(input, 7), expected);
}

TEST(MarkupSymbolizer, ResetStartsAnewAndIsShownOnlyAfterAModule) {
  const std::string input =
      "{{{reset}}}\n{{{module:0:app:elf:abcd}}}\n{{{reset}}}\n{{{mmap:0x8000:0x1000:load:0:rx:0x1000}}}\n"
      "{{{bt:0:0x8004:pc}}}\n";
  // After the second reset module 0 is unknown: its mmap is left out and the frame is outside every mmap.
  EXPECT_EQ(run(input, input.size()),
            "[[[ELF module #0x0 \"app\"; BuildID=abcd]]]\n[[[reset]]]\n[[[bt:0:0x8004:pc]]]\n");
}

TEST(MarkupSymbolizer, DemanglesWithTheRuntimeByDefault) {
  EXPECT_EQ(demangle("_Z4mainv"), "main()");
  EXPECT_EQ(demangle("main.cold"), "main.cold");
  EXPECT_EQ(demangle("_Zbroken"), "_Zbroken");
}

}  // namespace
}  // namespace sampler
