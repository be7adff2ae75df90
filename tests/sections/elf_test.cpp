// ELF section reader (sections/elf_section.h): every fixture is made at test time, one per case, from readable
// text: gcc/as objects carrying an asm payload, objcopy and ar on top of them, yaml2obj-19 for big-endian files
// and for headers that lie. Checks exact contents, labels, statuses and diagnostics.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sections/elf_debug_info.h"
#include "sections/elf_section.h"
#include "sections/hex.h"

namespace sampler {
namespace {

namespace fs = std::filesystem;

const char* const kSection = ".debug_site_info";

/// What one visit saw, copied out of the callback (the bytes are valid only during it).
struct Visit {
  std::string label;
  ElfSection::Status status;
  std::string bytes;
  bool operator==(const Visit&) const = default;
};

void PrintTo(const Visit& v, std::ostream* os) {
  static const char* const names[] = {"found", "missing", "empty"};
  *os << "{" << v.label << ", " << names[static_cast<int>(v.status)] << ", \"" << v.bytes << "\"}";
}

Visit found(std::string label, std::string bytes) { return {std::move(label), ElfSection::Status::kFound, bytes}; }
Visit missing(std::string label) { return {std::move(label), ElfSection::Status::kMissing, ""}; }
Visit empty(std::string label, std::string bytes = "") {
  return {std::move(label), ElfSection::Status::kEmpty, std::move(bytes)};
}

struct Outcome {
  bool ok = false;
  std::vector<Visit> visits;
  std::vector<std::string> diagnostics;  // "error: LABEL: MESSAGE", label relative to the fixture directory
  std::string undone;                    // streamed: pieces passed on for an ELF whose `done` never came
};

/// A lowercase hex string of `bytes` (yaml2obj's Content syntax).
std::string to_hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (unsigned char c : bytes) {
    text += digits[c >> 4];
    text += digits[c & 15];
  }
  return text;
}

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}
std::string le32(uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
}
std::string be64(uint64_t v) { return be32(static_cast<uint32_t>(v >> 32)) + be32(static_cast<uint32_t>(v)); }
std::string le64(uint64_t v) { return le32(static_cast<uint32_t>(v)) + le32(static_cast<uint32_t>(v >> 32)); }

std::string zlib_compress(std::string_view data) {
  uLongf size = compressBound(data.size());
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(data.data()), data.size(),
                6) != Z_OK) {
    throw std::runtime_error("compress2 failed");
  }
  out.resize(size);
  return out;
}

std::string zstd_compress(std::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t size = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  if (ZSTD_isError(size)) throw std::runtime_error("ZSTD_compress failed");
  out.resize(size);
  return out;
}

/// Site-info-like text, compressible enough that objcopy really compresses it.
std::string site_text(int lines) {
  std::string text = "<sites unit=\"0123456789abcdef0123456789abcdef\" scheme=\"branches\">\n";
  for (int i = 0; i < lines; ++i) text += "main.c\t" + std::to_string(i + 1) + "\tmain\t" + std::to_string(i) + "\n";
  return text + "</sites>\n";
}

class ElfSectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "elf_test.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write(const std::string& name, std::string_view contents) const {
    std::ofstream out(path(name), std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) throw std::runtime_error("cannot write " + name);
    return path(name);
  }

  static std::string slurp(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  void run(const std::string& command) const {
    const std::string full = "cd '" + dir_.string() + "' && " + command + " >cmd.err 2>&1";
    if (std::system(full.c_str()) != 0) {
      throw std::runtime_error("command failed: " + command + "\n" + slurp(path("cmd.err")));
    }
  }

  /// Assembler directives that put `payload` into `section` (as .byte lists: any byte, no quoting problems).
  static std::string asm_payload(std::string_view payload, const std::string& section = kSection,
                                 const std::string& type = "@progbits", const std::string& extra = "") {
    std::string text = ".pushsection " + section + ",\"\"," + type + "\n" + extra;
    for (size_t i = 0; i < payload.size(); i += 32) {
      text += ".byte ";
      for (size_t j = i; j < std::min(payload.size(), i + 32); ++j) {
        if (j > i) text += ',';
        text += std::to_string(static_cast<unsigned char>(payload[j]));
      }
      text += '\n';
    }
    return text + ".popsection\n";
  }

  /// `gcc -c` of a C file whose top-level asm carries the payload (the way instrumented code emits it).
  std::string object(const std::string& name, std::string_view payload, const std::string& extra = "",
                     const std::string& type = "@progbits") const {
    std::string asm_text = asm_payload(payload, kSection, type, extra);
    std::string escaped;
    for (char c : asm_text) {
      if (c == '"')
        escaped += "\\\"";
      else if (c == '\n')
        escaped += "\\n";
      else
        escaped += c;
    }
    write(name + ".c", "__asm__(\"" + escaped + "\");\nint " + name + "_function(void) { return 42; }\n");
    run(std::string(SAMPLER_TEST_CC) + " -c " + name + ".c -o " + name + ".o");
    return path(name + ".o");
  }

  /// An object without the section.
  std::string plain_object(const std::string& name) const {
    write(name + ".c", "int " + name + "_function(void) { return 7; }\n");
    run(std::string(SAMPLER_TEST_CC) + " -c " + name + ".c -o " + name + ".o");
    return path(name + ".o");
  }

  std::string yaml(const std::string& name, const std::string& text) const {
    write(name + ".yaml", text);
    run(std::string(SAMPLER_TEST_YAML2OBJ) + " " + name + ".yaml -o " + name);
    return path(name);
  }

  /// A yaml2obj ELF with one section `.debug_site_info` whose content (hex) and extra keys are given.
  std::string yaml_elf(const std::string& name, const std::string& content_hex, const std::string& section_keys = "",
                       const std::string& data = "ELFDATA2LSB", const std::string& elf_class = "ELFCLASS64",
                       const std::string& machine = "EM_X86_64", const std::string& header_keys = "") const {
    return yaml(name, "--- !ELF\nFileHeader:\n  Class: " + elf_class + "\n  Data: " + data +
                          "\n  Type: ET_REL\n  Machine: " + machine + "\n" + header_keys +
                          "Sections:\n  - Name: .debug_site_info\n    Type: SHT_PROGBITS\n    Content: \"" +
                          content_hex + "\"\n" + section_keys);
  }

  std::string relative(const std::string& label) const {
    const std::string prefix = dir_.string() + "/";
    return label.starts_with(prefix) ? label.substr(prefix.size()) : label;
  }

  Outcome collect(bool ok, const DiagnosticList& list, std::vector<Visit> visits) const {
    Outcome outcome{ok, std::move(visits), {}};
    for (auto& v : outcome.visits) v.label = relative(v.label);
    for (const auto& d : list.items) {
      outcome.diagnostics.push_back(std::string(d.severity == Severity::kError ? "error: " : "warning: ") +
                                    relative(d.file) + ": " + d.message);
      EXPECT_EQ(d.line, 0u);
    }
    return outcome;
  }

  Outcome extract(const std::string& file, const std::string& section = kSection) const {
    DiagnosticList list;
    std::vector<Visit> visits;
    const bool ok = for_each_elf_section(
        file, section,
        [&](const ElfSection& s) {
          visits.push_back({s.label, s.status, std::string(s.bytes)});
        },
        list);
    return collect(ok, list, std::move(visits));
  }

  /// The streamed form: each visit's bytes are the pieces passed on before its `done`.
  Outcome extract_streamed(const std::string& file, const std::string& section = kSection) const {
    DiagnosticList list;
    std::vector<Visit> visits;
    std::string pending;
    ElfSectionStream stream;
    stream.piece = [&](std::string_view piece) {
      EXPECT_FALSE(piece.empty());
      EXPECT_LE(piece.size(), std::max<size_t>(kStreamPieceSize, fs::file_size(file)));
      pending += piece;
    };
    stream.done = [&](const ElfSection& s) {
      EXPECT_TRUE(s.bytes.empty());
      visits.push_back({s.label, s.status, pending});
      pending.clear();
    };
    const bool ok = for_each_elf_section_streamed(file, section, stream, list);
    Outcome outcome = collect(ok, list, std::move(visits));
    outcome.undone = pending;
    return outcome;
  }

  Outcome extract_in_memory(const std::string& file, const std::string& section = kSection) const {
    const std::string image = slurp(file);
    DiagnosticList list;
    std::vector<Visit> visits;
    const bool ok = for_each_elf_section_in_memory(
        image, file, section,
        [&](const ElfSection& s) {
          visits.push_back({s.label, s.status, std::string(s.bytes)});
        },
        list);
    return collect(ok, list, std::move(visits));
  }

  /// The file's own size, for diagnostics that quote it.
  std::string size_of(const std::string& file) const { return std::to_string(fs::file_size(file)); }

  /// Expects a clean extraction of exactly `expected`, from the file and from its image in memory.
  void expect_visits(const std::string& file, const std::vector<Visit>& expected,
                     const std::string& section = kSection) const {
    for (const Outcome& outcome :
         {extract(file, section), extract_in_memory(file, section), extract_streamed(file, section)}) {
      EXPECT_TRUE(outcome.ok);
      EXPECT_EQ(outcome.diagnostics, std::vector<std::string>{});
      EXPECT_EQ(outcome.visits, expected);
      EXPECT_EQ(outcome.undone, "");
    }
  }

  /// Expects exactly one error and no visit, from the file and from its image in memory.
  void expect_error(const std::string& file, const std::string& diagnostic) const {
    for (const Outcome& outcome : {extract(file), extract_in_memory(file), extract_streamed(file)}) {
      EXPECT_FALSE(outcome.ok);
      EXPECT_EQ(outcome.diagnostics, std::vector<std::string>{diagnostic});
      EXPECT_EQ(outcome.visits, std::vector<Visit>{});
    }
  }

  fs::path dir_;
};

// ---- Plain sections -----------------------------------------------------------------------------------------

TEST_F(ElfSectionTest, RelocatableObjectFromGcc) {
  const std::string payload = site_text(3);
  const std::string file = object("a", payload);
  expect_visits(file, {found("a.o", payload)});
}

TEST_F(ElfSectionTest, NulBytesStayInTheSection) {
  const std::string payload("one\0\0two\n\0", 10);
  expect_visits(object("nuls", payload), {found("nuls.o", payload)});
}

TEST_F(ElfSectionTest, LinkedExecutableConcatenatesObjectsWithPadding) {
  // The second object's section is 16-byte aligned: the linker pads with NUL bytes after "AAA\n\0".
  object("first", std::string("AAA\n\0", 5));
  object("second", "BBB\n", ".p2align 4\n");
  write("main.c", "int main(void) { return 0; }\n");
  run(std::string(SAMPLER_TEST_CC) + " first.o second.o main.c -o program");
  expect_visits(path("program"), {found("program", "AAA\n" + std::string(12, '\0') + "BBB\n")});
}

TEST_F(ElfSectionTest, Elf32FromAs32) {
  write("x86.s", asm_payload("thirty-two\n"));
  run(std::string(SAMPLER_TEST_AS) + " --32 x86.s -o x86.o");
  ASSERT_EQ(slurp(path("x86.o"))[4], '\1');  // ELFCLASS32
  expect_visits(path("x86.o"), {found("x86.o", "thirty-two\n")});
}

TEST_F(ElfSectionTest, SectionAddedByObjcopy) {
  plain_object("host");
  write("added.txt", std::string("added\0by objcopy\n", 17));
  run(std::string(SAMPLER_TEST_OBJCOPY) + " --add-section .debug_site_info=added.txt host.o host2.o");
  expect_visits(path("host2.o"), {found("host2.o", std::string("added\0by objcopy\n", 17))});
}

TEST_F(ElfSectionTest, MissingSection) { expect_visits(plain_object("none"), {missing("none.o")}); }

TEST_F(ElfSectionTest, OtherSectionNameIsNotConfused) {
  const std::string file = object("a", "payload\n");
  expect_visits(file, {missing("a.o")}, ".debug_site");
  expect_visits(file, {missing("a.o")}, ".debug_site_info2");
  expect_visits(file, {found("a.o", "payload\n")}, kSection);
}

TEST_F(ElfSectionTest, EmptySection) { expect_visits(object("empty", ""), {empty("empty.o")}); }

TEST_F(ElfSectionTest, OnlyNulBytesIsEmpty) {
  expect_visits(object("zeros", std::string(5, '\0')), {empty("zeros.o", std::string(5, '\0'))});
}

TEST_F(ElfSectionTest, NobitsSectionIsEmpty) {
  write("bss.s", ".pushsection .debug_site_info,\"\",@nobits\n.zero 64\n.popsection\n");
  run(std::string(SAMPLER_TEST_AS) + " bss.s -o bss.o");
  expect_visits(path("bss.o"), {empty("bss.o")});
}

TEST_F(ElfSectionTest, SeveralSectionsOfTheNameAreJoinedInOrder) {
  // yaml2obj's " (N)" suffix makes a second section with the same name.
  const std::string file =
      yaml("twice",
           "--- !ELF\nFileHeader:\n  Class: ELFCLASS64\n  Data: ELFDATA2LSB\n  Type: ET_REL\n"
           "  Machine: EM_X86_64\nSections:\n"
           "  - Name: .debug_site_info\n    Type: SHT_PROGBITS\n    Content: \"6f6e650a\"\n"
           "  - Name: .text\n    Type: SHT_PROGBITS\n    Content: \"c3\"\n"
           "  - Name: '.debug_site_info (1)'\n    Type: SHT_PROGBITS\n    Content: \"74776f0a\"\n");
  expect_visits(file, {found("twice", "one\ntwo\n")});
}

TEST_F(ElfSectionTest, UncompressedSectionIsAViewIntoTheImage) {
  const std::string image = slurp(object("view", "zero copy\n"));
  DiagnosticList list;
  bool inside = false;
  for_each_elf_section_in_memory(
      image, "view.o", kSection,
      [&](const ElfSection& s) {
        inside = s.bytes.data() >= image.data() && s.bytes.data() + s.bytes.size() <= image.data() + image.size();
      },
      list);
  EXPECT_TRUE(inside);
}

// ---- Compressed sections ------------------------------------------------------------------------------------

/// objcopy --compress-debug-sections=MODE on an object with a compressible payload; checks it really compressed.
class CompressedTest : public ElfSectionTest {
 protected:
  std::string compressed(const std::string& mode, const std::string& payload) {
    object("plain", payload);
    run(std::string(SAMPLER_TEST_OBJCOPY) + " --compress-debug-sections=" + mode + " plain.o packed.o");
    const std::string image = slurp(path("packed.o"));
    if (image.find(payload.substr(0, 200)) != std::string::npos) throw std::runtime_error("not compressed");
    return path("packed.o");
  }
};

TEST_F(CompressedTest, Zlib) {
  const std::string payload = site_text(400);
  expect_visits(compressed("zlib", payload), {found("packed.o", payload)});
}

TEST_F(CompressedTest, Zstd) {
  const std::string payload = site_text(400);
  expect_visits(compressed("zstd", payload), {found("packed.o", payload)});
}

TEST_F(CompressedTest, LegacyZdebugIsFoundUnderEitherName) {
  const std::string payload = site_text(400);
  const std::string file = compressed("zlib-gnu", payload);
  expect_visits(file, {found("packed.o", payload)}, ".debug_site_info");
  expect_visits(file, {found("packed.o", payload)}, ".zdebug_site_info");
}

TEST_F(CompressedTest, CompressedEmptySection) {
  // A gABI header stating 0 bytes, and an empty zlib stream.
  const std::string file = yaml_elf("empty", to_hex(le32(1) + le32(0) + le64(0) + le64(1) + zlib_compress("")),
                                    "    Flags: [ SHF_COMPRESSED ]\n");
  expect_visits(file, {empty("empty")});
}

// ---- Big-endian files (yaml2obj) ----------------------------------------------------------------------------

TEST_F(ElfSectionTest, BigEndianElf64) {
  const std::string file = yaml_elf("ppc64", to_hex("big endian\n"), "", "ELFDATA2MSB", "ELFCLASS64", "EM_PPC64");
  ASSERT_EQ(slurp(file)[5], '\2');  // ELFDATA2MSB
  expect_visits(file, {found("ppc64", "big endian\n")});
}

TEST_F(ElfSectionTest, BigEndianElf32) {
  const std::string file = yaml_elf("mips", to_hex("mips 32\n"), "", "ELFDATA2MSB", "ELFCLASS32", "EM_MIPS");
  expect_visits(file, {found("mips", "mips 32\n")});
}

TEST_F(ElfSectionTest, BigEndianCompressionHeaders) {
  // The compression header is in the file's byte order: Elf64_Chdr {type, reserved, size, align}, Elf32_Chdr
  // {type, size, align}.
  const std::string payload = site_text(50);
  const std::string zlib64 = be32(1) + be32(0) + be64(payload.size()) + be64(1) + zlib_compress(payload);
  const std::string zstd32 = be32(2) + be32(static_cast<uint32_t>(payload.size())) + be32(1) + zstd_compress(payload);
  const std::string flags = "    Flags: [ SHF_COMPRESSED ]\n";
  expect_visits(yaml_elf("be64", to_hex(zlib64), flags, "ELFDATA2MSB", "ELFCLASS64", "EM_PPC64"),
                {found("be64", payload)});
  expect_visits(yaml_elf("be32", to_hex(zstd32), flags, "ELFDATA2MSB", "ELFCLASS32", "EM_MIPS"),
                {found("be32", payload)});
}

TEST_F(ElfSectionTest, LittleEndianElf32CompressionHeader) {
  const std::string payload = site_text(50);
  const std::string zlib32 = le32(1) + le32(static_cast<uint32_t>(payload.size())) + le32(1) + zlib_compress(payload);
  expect_visits(
      yaml_elf("le32", to_hex(zlib32), "    Flags: [ SHF_COMPRESSED ]\n", "ELFDATA2LSB", "ELFCLASS32", "EM_386"),
      {found("le32", payload)});
}

// ---- Archives -----------------------------------------------------------------------------------------------

TEST_F(ElfSectionTest, ArchiveMembersInOrder) {
  object("a", "from a\n");
  plain_object("nosection");
  object("a_member_with_a_long_name", "from the long name\n");  // over 15 characters: the "//" table
  run(std::string(SAMPLER_TEST_AR) + " rcs lib.a a.o nosection.o a_member_with_a_long_name.o");
  expect_visits(path("lib.a"), {found("lib.a(a.o)", "from a\n"), missing("lib.a(nosection.o)"),
                                found("lib.a(a_member_with_a_long_name.o)", "from the long name\n")});
}

TEST_F(ElfSectionTest, ArchiveWithCompressedMember) {
  const std::string payload = site_text(300);
  object("big", payload);
  run(std::string(SAMPLER_TEST_OBJCOPY) + " --compress-debug-sections=zstd big.o z.o");
  run(std::string(SAMPLER_TEST_AR) + " rc lib.a z.o");
  expect_visits(path("lib.a"), {found("lib.a(z.o)", payload)});
}

TEST_F(ElfSectionTest, EmptyArchiveIsMissing) {
  write("empty.a", "!<arch>\n");
  expect_visits(path("empty.a"), {missing("empty.a")});
}

TEST_F(ElfSectionTest, BadArchiveMembersAreReportedAndTheOthersStillRead) {
  object("a", "from a\n");
  object("b", "from b\n");
  write("notes.txt", "not an object\n");
  const std::string whole = slurp(path("a.o"));
  write("cut.o", whole.substr(0, whole.size() - 10));  // the section header table is at the end
  run(std::string(SAMPLER_TEST_AR) + " rc lib.a a.o notes.txt cut.o b.o");
  const std::string cut_size = std::to_string(whole.size() - 10);
  for (const Outcome& outcome : {extract(path("lib.a")), extract_in_memory(path("lib.a"))}) {
    EXPECT_FALSE(outcome.ok);
    EXPECT_EQ(outcome.visits, (std::vector<Visit>{found("lib.a(a.o)", "from a\n"), found("lib.a(b.o)", "from b\n")}));
    ASSERT_EQ(outcome.diagnostics.size(), 2u);
    EXPECT_EQ(outcome.diagnostics[0], "error: lib.a(notes.txt): archive member is not an ELF file");
    EXPECT_TRUE(outcome.diagnostics[1].starts_with("error: lib.a(cut.o): section header table (offset 0x"))
        << outcome.diagnostics[1];
    EXPECT_TRUE(outcome.diagnostics[1].ends_with("extends past the end of the file (" + cut_size + " bytes)"))
        << outcome.diagnostics[1];
  }
}

TEST_F(ElfSectionTest, TruncatedArchiveMember) {
  object("a", "from a\n");
  object("b", "from b\n");
  run(std::string(SAMPLER_TEST_AR) + " rc lib.a a.o b.o");
  const std::string whole = slurp(path("lib.a"));
  const std::string cut = write("cut.a", whole.substr(0, whole.size() - 100));
  const std::string b_size = std::to_string(fs::file_size(path("b.o")));
  for (const Outcome& outcome : {extract(cut), extract_in_memory(cut)}) {
    EXPECT_FALSE(outcome.ok);
    EXPECT_EQ(outcome.visits, (std::vector<Visit>{found("cut.a(a.o)", "from a\n")}));
    ASSERT_EQ(outcome.diagnostics.size(), 1u);
    EXPECT_TRUE(
        outcome.diagnostics[0].starts_with("error: cut.a(b.o): archive member is truncated (its header "
                                           "states " +
                                           b_size + " bytes, "))
        << outcome.diagnostics[0];
  }
}

TEST_F(ElfSectionTest, MalformedArchiveHeader) {
  object("a", "from a\n");
  run(std::string(SAMPLER_TEST_AR) + " rc lib.a a.o");
  std::string image = slurp(path("lib.a"));
  image += "garbage that is no member header at all, sixty bytes or more........\n";
  const std::string file = write("bad.a", image);
  const std::string offset = std::to_string(fs::file_size(path("lib.a")));
  for (const Outcome& outcome : {extract(file), extract_in_memory(file)}) {
    EXPECT_FALSE(outcome.ok);
    EXPECT_EQ(outcome.visits, (std::vector<Visit>{found("bad.a(a.o)", "from a\n")}));
    EXPECT_EQ(outcome.diagnostics,
              std::vector<std::string>{"error: bad.a: malformed archive member header at offset " + offset});
  }
}

// ---- Not ELF, unreadable, truncated -------------------------------------------------------------------------

TEST_F(ElfSectionTest, NotElf) {
  expect_error(write("text", "<sites unit=\"x\">\n"), "error: text: not an ELF file or ar archive");
}

TEST_F(ElfSectionTest, BadIdentification) {
  std::string image = slurp(object("a", "x\n"));
  struct Case {
    size_t index;
    char value;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{{4, '\3', "unknown ELF class 3"},
                                         {5, '\0', "unknown ELF byte order 0"},
                                         {6, '\x7b', "unknown ELF version 123"}}) {
    std::string bad = image;
    bad[c.index] = c.value;
    expect_error(write("bad" + std::to_string(c.index), bad),
                 "error: bad" + std::to_string(c.index) + ": " + c.message);
  }
}

TEST_F(ElfSectionTest, EmptyFile) {
  expect_error(write("nothing", ""), "error: nothing: not an ELF file or ar archive (the file is empty)");
}

TEST_F(ElfSectionTest, FileThatCannotBeOpenedOrIsADirectory) {
  Outcome outcome = extract(path("absent.o"));
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.diagnostics, std::vector<std::string>{"error: absent.o: cannot open: No such file or directory"});
  fs::create_directory(path("subdir"));
  outcome = extract(path("subdir"));
  EXPECT_EQ(outcome.diagnostics, std::vector<std::string>{"error: subdir: is a directory"});
}

TEST_F(ElfSectionTest, TruncatedFiles) {
  const std::string whole = slurp(object("a", site_text(5)));
  struct Case {
    size_t length;
    std::string message;
  };
  const std::vector<Case> cases = {
      {3, "not an ELF file or ar archive"},
      {10, "truncated ELF header (10 bytes)"},
      {40, "truncated ELF header (40 bytes, expected 64)"},
      {64, "section header table at offset 0x"},  // checked by prefix below
      {whole.size() - 1, "section header table (offset 0x"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.length);
    const std::string file = write("cut" + std::to_string(c.length), whole.substr(0, c.length));
    for (const Outcome& outcome : {extract(file), extract_in_memory(file)}) {
      EXPECT_FALSE(outcome.ok);
      EXPECT_TRUE(outcome.visits.empty());
      ASSERT_EQ(outcome.diagnostics.size(), 1u);
      EXPECT_TRUE(outcome.diagnostics[0].starts_with("error: " + relative(file) + ": " + c.message))
          << outcome.diagnostics[0];
    }
  }
}

// ---- Headers that lie ---------------------------------------------------------------------------------------

TEST_F(ElfSectionTest, SectionSizePastTheEndOfTheFile) {
  const std::string file = yaml_elf("lying", to_hex("hello\n"), "    ShSize: 0x10000000\n");
  expect_error(file,
               "error: lying: section '.debug_site_info' (offset 0x40, size 0x10000000) extends past the "
               "end of the file (" +
                   size_of(file) + " bytes)");
}

TEST_F(ElfSectionTest, SectionOffsetThatOverflows) {
  const std::string file =
      yaml_elf("lying", to_hex("hello\n"), "    ShOffset: 0xffffffffffffff00\n    ShSize: 0x200\n");
  expect_error(file,
               "error: lying: section '.debug_site_info' (offset 0xffffffffffffff00, size 0x200) extends past "
               "the end of the file (" +
                   size_of(file) + " bytes)");
}

TEST_F(ElfSectionTest, SectionHeaderTablePastTheEnd) {
  const std::string file =
      yaml_elf("lying", to_hex("hello\n"), "", "ELFDATA2LSB", "ELFCLASS64", "EM_X86_64", "  EShOff: 0x100000\n");
  expect_error(file, "error: lying: section header table at offset 0x100000 is past the end of the file (" +
                         size_of(file) + " bytes)");
}

TEST_F(ElfSectionTest, SectionCountPastTheEnd) {
  const std::string file =
      yaml_elf("lying", to_hex("hello\n"), "", "ELFDATA2LSB", "ELFCLASS64", "EM_X86_64", "  EShNum: 5000\n");
  const Outcome outcome = extract(file);
  ASSERT_EQ(outcome.diagnostics.size(), 1u);
  EXPECT_TRUE(outcome.diagnostics[0].starts_with("error: lying: section header table (offset 0x"));
  EXPECT_TRUE(outcome.diagnostics[0].ends_with(", 5000 entries) extends past the end of the file (" + size_of(file) +
                                               " bytes)"));
}

TEST_F(ElfSectionTest, BadSectionHeaderEntrySize) {
  const std::string file =
      yaml_elf("lying", to_hex("hello\n"), "", "ELFDATA2LSB", "ELFCLASS64", "EM_X86_64", "  EShEntSize: 12\n");
  expect_error(file, "error: lying: section header entry size is 12, expected 64");
}

TEST_F(ElfSectionTest, SectionNameTableIndexOutOfRange) {
  const std::string file =
      yaml_elf("lying", to_hex("hello\n"), "", "ELFDATA2LSB", "ELFCLASS64", "EM_X86_64", "  EShStrNdx: 99\n");
  expect_error(file, "error: lying: section name table index 99 is out of range (4 sections)");
}

TEST_F(ElfSectionTest, SectionNameTablePastTheEnd) {
  const std::string file = yaml("lying",
                                "--- !ELF\nFileHeader:\n  Class: ELFCLASS64\n  Data: ELFDATA2LSB\n  Type: ET_REL\n"
                                "  Machine: EM_X86_64\nSections:\n"
                                "  - Name: .debug_site_info\n    Type: SHT_PROGBITS\n    Content: \"6f6e650a\"\n"
                                "  - Name: .shstrtab\n    Type: SHT_STRTAB\n    ShSize: 0x7000000\n");
  const Outcome outcome = extract(file);
  EXPECT_FALSE(outcome.ok);
  ASSERT_EQ(outcome.diagnostics.size(), 1u);
  EXPECT_TRUE(outcome.diagnostics[0].starts_with("error: lying: section name table (offset 0x"));
  EXPECT_TRUE(outcome.diagnostics[0].ends_with(", size 0x7000000) extends past the end of the file (" + size_of(file) +
                                               " bytes)"));
}

TEST_F(ElfSectionTest, LyingSectionIsReportedEvenIfAnotherSectionIsFine) {
  const std::string file = yaml("lying",
                                "--- !ELF\nFileHeader:\n  Class: ELFCLASS64\n  Data: ELFDATA2LSB\n  Type: ET_REL\n"
                                "  Machine: EM_X86_64\nSections:\n"
                                "  - Name: .debug_site_info\n    Type: SHT_PROGBITS\n    Content: \"6f6e650a\"\n"
                                "  - Name: '.debug_site_info (1)'\n    Type: SHT_PROGBITS\n    Content: \"00\"\n"
                                "    ShSize: 0x1000000\n");
  const Outcome outcome = extract(file);
  EXPECT_FALSE(outcome.ok);
  EXPECT_TRUE(outcome.visits.empty());  // half a section would be silently wrong
  ASSERT_EQ(outcome.diagnostics.size(), 1u);
  EXPECT_TRUE(outcome.diagnostics[0].find("size 0x1000000) extends past the end") != std::string::npos);
}

// ---- Compressed sections that lie ---------------------------------------------------------------------------

struct BadCompression {
  const char* name;
  std::string content;  // the section's raw bytes (little-endian ELF64)
  std::string message;  // after "error: NAME: section '.debug_site_info' "
};

std::string chdr64(uint32_t type, uint64_t size) { return le32(type) + le32(0) + le64(size) + le64(1); }

TEST_F(ElfSectionTest, CompressedSectionsThatLie) {
  const std::string hello = "hello, world\n";
  const std::vector<BadCompression> cases = {
      {"bomb", chdr64(1, 100'000'000'000ull) + zlib_compress(hello),
       "states a decompressed size of 100000000000 bytes, over the limit of 4294967296 bytes"},
      {"zstdbomb", chdr64(2, 100'000'000'000ull) + zstd_compress(hello),
       "states a decompressed size of 100000000000 bytes, over the limit of 4294967296 bytes"},
      {"expansion", chdr64(1, 10'000'000) + zlib_compress(hello),
       "states a decompressed size of 10000000 bytes, over 1000 times the size of the file ("},
      {"longer", chdr64(1, 100) + zlib_compress(hello), ": decompresses to 13 bytes, but its header states 100"},
      {"shorter", chdr64(1, 5) + zlib_compress(hello), ": decompresses to more than the 5 bytes its header states"},
      {"zstdlonger", chdr64(2, 100) + zstd_compress(hello), ": decompresses to 13 bytes, but its header states 100"},
      {"zstdshorter", chdr64(2, 5) + zstd_compress(hello), ": decompresses to more than the 5 bytes its header states"},
      {"corrupt", chdr64(1, 13) + "not zlib at all", ": invalid zlib data: incorrect header check"},
      {"cutshort", chdr64(1, 13) + zlib_compress(hello).substr(0, 8),
       ": compressed data is truncated (zlib stream ends early)"},
      {"zstdcorrupt", chdr64(2, 13) + "not zstd at all", ": invalid zstd data: Unknown frame descriptor"},
      {"unknown", chdr64(7, 13) + zlib_compress(hello), "uses unknown compression type 7"},
      {"short", std::string("\1\0\0\0\0\0", 6), "is compressed but too short for its compression header (6 bytes)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file = yaml_elf(c.name, to_hex(c.content), "    Flags: [ SHF_COMPRESSED ]\n");
    std::string expected = "error: " + std::string(c.name) + ": section '.debug_site_info'" +
                           (c.message.starts_with(":") ? "" : " ") + c.message;
    if (expected.ends_with("(")) expected += size_of(file) + " bytes)";
    expect_error(file, expected);
  }
}

TEST_F(ElfSectionTest, LegacyZdebugBomb) {
  const std::string content = "ZLIB" + be64(100'000'000'000ull) + zlib_compress("hello\n");
  const std::string file = yaml("legacy",
                                "--- !ELF\nFileHeader:\n  Class: ELFCLASS64\n  Data: ELFDATA2LSB\n  Type: ET_REL\n"
                                "  Machine: EM_X86_64\nSections:\n"
                                "  - Name: .zdebug_site_info\n    Type: SHT_PROGBITS\n    Content: \"" +
                                    to_hex(content) + "\"\n");
  expect_error(file,
               "error: legacy: section '.zdebug_site_info' states a decompressed size of 100000000000 bytes, "
               "over the limit of 4294967296 bytes");
}

TEST_F(ElfSectionTest, ZdebugWithoutZlibHeaderIsTakenAsItIs) {
  const std::string file = yaml("raw",
                                "--- !ELF\nFileHeader:\n  Class: ELFCLASS64\n  Data: ELFDATA2LSB\n  Type: ET_REL\n"
                                "  Machine: EM_X86_64\nSections:\n"
                                "  - Name: .zdebug_site_info\n    Type: SHT_PROGBITS\n    Content: \"" +
                                    to_hex("plain text\n") + "\"\n");
  expect_visits(file, {found("raw", "plain text\n")});
}

// ---- Streaming ----------------------------------------------------------------------------------------------

TEST_F(CompressedTest, LargeSectionsStreamInPiecesOfBoundedSize) {
  // Over four pieces' worth, so the stream really goes through its buffer several times.
  const std::string payload = site_text(120'000);
  ASSERT_GT(payload.size(), 4 * kStreamPieceSize);
  for (const std::string mode : {"zlib", "zstd"}) {
    SCOPED_TRACE(mode);
    const std::string file = compressed(mode, payload);
    size_t pieces = 0, largest = 0;
    std::string joined;
    ElfSectionStream stream;
    stream.piece = [&](std::string_view piece) {
      ++pieces;
      largest = std::max(largest, piece.size());
      joined += piece;
    };
    int done = 0;
    stream.done = [&](const ElfSection& s) {
      ++done;
      EXPECT_EQ(s.status, ElfSection::Status::kFound);
    };
    DiagnosticList list;
    EXPECT_TRUE(for_each_elf_section_streamed(file, kSection, stream, list));
    EXPECT_EQ(list.items.size(), 0u);
    EXPECT_EQ(done, 1);
    EXPECT_EQ(joined, payload);
    EXPECT_GE(pieces, 5u);
    EXPECT_LE(largest, kStreamPieceSize);
  }
}

TEST_F(ElfSectionTest, StreamedDamageFoundLateKeepsThePiecesPassedAndSkipsDone) {
  // The header states fewer bytes than the stream holds: found only once more than that has come out.
  const std::string payload = site_text(60'000);
  const uint64_t stated = payload.size() / 2;
  for (const auto& [name, stream_bytes] :
       {std::pair<std::string, std::string>{"zlib",
                                            le32(1) + le32(0) + le64(stated) + le64(1) + zlib_compress(payload)},
        std::pair<std::string, std::string>{"zstd",
                                            le32(2) + le32(0) + le64(stated) + le64(1) + zstd_compress(payload)}}) {
    SCOPED_TRACE(name);
    const std::string file = yaml_elf(name, to_hex(stream_bytes), "    Flags: [ SHF_COMPRESSED ]\n");
    const Outcome outcome = extract_streamed(file);
    EXPECT_FALSE(outcome.ok);
    EXPECT_EQ(outcome.visits, std::vector<Visit>{});
    EXPECT_EQ(outcome.diagnostics, std::vector<std::string>{"error: " + name +
                                                            ": section '.debug_site_info': "
                                                            "decompresses to more than the " +
                                                            std::to_string(stated) + " bytes its header states"});
    EXPECT_FALSE(outcome.undone.empty());
    EXPECT_LE(outcome.undone.size(), stated);
    EXPECT_EQ(outcome.undone, payload.substr(0, outcome.undone.size()));
  }
}

// ---- Helpers ------------------------------------------------------------------------------------------------

TEST(NonNulSpans, Table) {
  struct Case {
    std::string input;
    std::vector<std::string> spans;
  };
  const std::vector<Case> cases = {
      {"", {}},
      {std::string(3, '\0'), {}},
      {"abc", {"abc"}},
      {std::string("\0abc", 4), {"abc"}},
      {std::string("abc\0", 4), {"abc"}},
      {std::string("a\0\0b\0c", 6), {"a", "b", "c"}},
      {std::string("\0\0one\ntwo\n\0\0\0three\n\0", 20), {"one\ntwo\n", "three\n"}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> spans;
    for_each_non_nul_span(c.input, [&](std::string_view s) { spans.emplace_back(s); });
    EXPECT_EQ(spans, c.spans) << "input size " << c.input.size();
  }
}

// ---- Build IDs and debug information (sections/elf_debug_info.h, sampler-symbol-dir) ---------------------------

/// A yaml2obj ELF whose sections are given as yaml (after "Sections:").
std::string debug_info_yaml(const std::string& data, const std::string& elf_class, const std::string& sections) {
  return "--- !ELF\nFileHeader:\n  Class: " + elf_class + "\n  Data: " + data +
         "\n  Type: ET_EXEC\n  Machine: EM_X86_64\nSections:\n" + sections;
}

/// A GNU build-ID note: name size 4, description size, type 3, "GNU\0", the ID (padded to 4 bytes).
std::string build_id_note(const std::string& id, bool big_endian) {
  auto word = [&](uint32_t v) { return big_endian ? be32(v) : le32(v); };
  std::string note = word(4) + word(static_cast<uint32_t>(id.size())) + word(3) + std::string("GNU\0", 4) + id;
  note.append((4 - id.size() % 4) % 4, '\0');
  return note;
}

TEST_F(ElfSectionTest, BuildIdAndDebugInformation) {
  // Another note first (an ABI tag), then the build ID; DWARF and a symbol table.
  const std::string abi_note = le32(4) + le32(16) + le32(1) + std::string("GNU\0", 4) + std::string(16, '\0');
  const std::string file = yaml(
      "full", debug_info_yaml("ELFDATA2LSB", "ELFCLASS64",
                              "  - Name: .note.ABI-tag\n    Type: SHT_NOTE\n    AddressAlign: 4\n    Content: \"" +
                                  to_hex(abi_note) + "\"\n  - Name: .note.gnu.build-id\n    Type: SHT_NOTE\n"
                                  "    AddressAlign: 4\n    Content: \"" + to_hex(build_id_note("\x4a\x23\x4d", false)) +
                                  "\"\n  - Name: .debug_info\n    Type: SHT_PROGBITS\n    Content: \"0102\"\n"
                                  "  - Name: .symtab\n    Type: SHT_SYMTAB\n"));
  DiagnosticList list;
  std::optional<ElfDebugInfo> info = read_elf_debug_info(file, list);
  ASSERT_TRUE(info) << (list.items.empty() ? "" : list.items[0].message);
  EXPECT_EQ(hex_bytes(info->build_id), "4a234d");
  EXPECT_EQ(build_id_entry(info->build_id), ".build-id/4a/234d.debug");
  EXPECT_TRUE(info->has_dwarf);
  EXPECT_TRUE(info->has_symbol_table);
}

TEST_F(ElfSectionTest, BuildIdOfEitherByteOrderAndWithoutDebugInformation) {
  const std::string file = yaml(
      "be32", debug_info_yaml("ELFDATA2MSB", "ELFCLASS32",
                              "  - Name: .note.gnu.build-id\n    Type: SHT_NOTE\n    AddressAlign: 4\n    Content: \"" +
                                  to_hex(build_id_note("\x01\x02\x03\x04\x05", true)) +
                                  "\"\n  - Name: .debug_info\n    Type: SHT_NOBITS\n    Size: 16\n"));
  DiagnosticList list;
  std::optional<ElfDebugInfo> info = read_elf_debug_info(file, list);
  ASSERT_TRUE(info);
  EXPECT_EQ(hex_bytes(info->build_id), "0102030405");
  EXPECT_FALSE(info->has_dwarf);  // NOBITS: a stripped file's placeholder
  EXPECT_FALSE(info->has_symbol_table);
}

TEST_F(ElfSectionTest, LyingNotesAndFilesThatAreNotOneElf) {
  // A note whose description size runs past its section: no build ID, no read past the end.
  const std::string lying_note = le32(4) + le32(0x7fffffff) + le32(3) + std::string("GNU\0", 4) + "\x01\x02";
  const std::string file = yaml(
      "lying", debug_info_yaml("ELFDATA2LSB", "ELFCLASS64",
                               "  - Name: .note.gnu.build-id\n    Type: SHT_NOTE\n    Content: \"" +
                                   to_hex(lying_note) + "\"\n"));
  DiagnosticList list;
  std::optional<ElfDebugInfo> info = read_elf_debug_info(file, list);
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->build_id.empty());
  EXPECT_TRUE(list.items.empty());

  write("text", "not ELF at all\n");
  EXPECT_FALSE(read_elf_debug_info(path("text"), list));
  const std::string member = object("member", "x");
  run(std::string(SAMPLER_TEST_AR) + " rc " + path("lib.a") + " " + member);
  EXPECT_FALSE(read_elf_debug_info(path("lib.a"), list));
  ASSERT_EQ(list.items.size(), 2u);
  EXPECT_EQ(list.items[0].message, "not an ELF file or ar archive");
  EXPECT_EQ(list.items[0].code, DiagnosticCode::kNotElf);
  EXPECT_EQ(list.items[1].message, "an ar archive, not one ELF file: archives have no build ID");
}

// A member libelf refuses (its long name at an offset past the name table) is reported, and the
// members after it are still read.
TEST_F(ElfSectionTest, AMemberLibelfRefusesIsSkippedAndTheRestRead) {
  const std::string a = object("first_long_member_name", "first\n");
  const std::string b = object("second_long_member_name", "second\n");
  const std::string c = object("third_long_member_name", "third\n");
  run(std::string(SAMPLER_TEST_AR) + " rc " + path("lib.a") + " " + a + " " + b + " " + c);
  std::string archive = slurp(path("lib.a"));
  const size_t header = archive.find("/26 ");  // the second member's name: offset 26 of the name table
  ASSERT_NE(header, std::string::npos);
  archive.replace(header, 5, "/9999");
  DiagnosticList list;
  std::vector<std::string> found;
  EXPECT_FALSE(for_each_elf_section_in_memory(archive, "lib.a", kSection, [&](const ElfSection& section) {
    found.push_back(section.label + ": " + std::string(section.bytes));
  }, list));
  EXPECT_EQ(found, (std::vector<std::string>{"lib.a(first_long_member_name.o): first\n",
                                             "lib.a(third_long_member_name.o): third\n"}));
  ASSERT_EQ(list.items.size(), 1u);
  EXPECT_EQ(list.items[0].file, "lib.a(/9999)");
  EXPECT_EQ(list.items[0].code, DiagnosticCode::kMalformedArchiveMember);
  EXPECT_TRUE(list.items[0].message.ends_with("; the member is skipped")) << list.items[0].message;
}

TEST(LooksLikeElfOrArchive, Table) {
  EXPECT_TRUE(
      looks_like_elf_or_archive("\x7f"
                                "ELF\2\1\1"));
  EXPECT_TRUE(looks_like_elf_or_archive("!<arch>\nmember"));
  EXPECT_FALSE(
      looks_like_elf_or_archive("\x7f"
                                "EL"));
  EXPECT_FALSE(looks_like_elf_or_archive("!<arch>"));
  EXPECT_FALSE(looks_like_elf_or_archive("<sites unit=\"0\">"));
  EXPECT_FALSE(looks_like_elf_or_archive(""));
}

TEST(InMemory, EmptyImage) {
  DiagnosticList list;
  int visits = 0;
  EXPECT_FALSE(for_each_elf_section_in_memory(
      "", "mem", kSection, [&](const ElfSection&) { ++visits; }, list));
  EXPECT_EQ(visits, 0);
  ASSERT_EQ(list.items.size(), 1u);
  EXPECT_EQ(list.items[0].file, "mem");
  EXPECT_EQ(list.items[0].message, "not an ELF file or ar archive (the file is empty)");
}

}  // namespace
}  // namespace sampler
