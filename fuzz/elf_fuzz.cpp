// Fuzz target: the ELF section reader over bytes in memory (sections/elf_section.h): ELF32/ELF64 of either
// byte order, ar archives, SHF_COMPRESSED sections (zlib, zstd) and legacy .zdebug_* sections.
//
// Each input is read whole (for_each_elf_section_in_memory) and streamed (for_each_elf_section_streamed_in_memory,
// the form extract-section uses), for .debug_site_info (which also finds .zdebug_site_info) and for .bss
// (SHT_NOBITS). Checked properties: both forms visit the same ELFs with the same status and the same bytes, and
// report problems for the same ELFs; a status agrees with the bytes (kFound has a non-NUL byte, kEmpty none); every
// diagnostic names the input or one of its members; the result is true exactly when no error was reported.
// Sizes: the reader's own limits (kMaxExpansion times the input) bound what it may allocate. The build ID reader
// (sections/elf_debug_info.h) reads the same input: it succeeds exactly when it reports no error, and a build ID it
// finds lies inside the input.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "sections/elf_debug_info.h"
#include "sections/elf_section.h"

namespace sampler::fuzz {
namespace {

struct Visit {
  std::string label;
  ElfSection::Status status;
  std::string bytes;
};

bool same(const std::vector<Visit>& a, const std::vector<Visit>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].label != b[i].label || a[i].status != b[i].status || a[i].bytes != b[i].bytes) return false;
  }
  return true;
}

void check_status(const ElfSection& section, std::string_view bytes) {
  switch (section.status) {
    case ElfSection::Status::kFound:
      FUZZ_CHECK(bytes.find_first_not_of('\0') != std::string_view::npos);
      break;
    case ElfSection::Status::kEmpty:
      FUZZ_CHECK(bytes.find_first_not_of('\0') == std::string_view::npos);
      break;
    case ElfSection::Status::kMissing:
      FUZZ_CHECK(bytes.empty());
      break;
  }
  FUZZ_CHECK(section.label.starts_with("fuzz"));
}

void check(std::string_view image, std::string_view section_name) {
  DiagnosticList whole_diagnostics;
  std::vector<Visit> whole;
  const bool whole_ok = for_each_elf_section_in_memory(
      image, "fuzz", section_name,
      [&](const ElfSection& section) {
        check_status(section, section.bytes);
        if (section.status == ElfSection::Status::kFound) {
          FUZZ_CHECK(section.bytes.size() <= image.size() * kMaxExpansion);
        }
        whole.push_back(Visit{section.label, section.status, std::string(section.bytes)});
        // The extraction's normalisation: the non-NUL runs add up to the bytes without NULs.
        size_t non_nul = 0;
        for_each_non_nul_span(section.bytes, [&](std::string_view run) {
          FUZZ_CHECK(!run.empty() && run.find('\0') == std::string_view::npos);
          non_nul += run.size();
        });
        size_t nul = 0;
        for (char c : section.bytes) nul += c == '\0';
        FUZZ_CHECK(non_nul + nul == section.bytes.size());
      },
      whole_diagnostics);
  FUZZ_CHECK(whole_ok == (whole_diagnostics.error_count() == 0));
  for (const auto& d : whole_diagnostics.items) FUZZ_CHECK(d.file.starts_with("fuzz") && !d.message.empty());

  // Damage inside compressed data is found while streaming: the pieces already passed on stand, then the error
  // comes and that ELF gets no `done`. Whole, it gets no visit at all; so pieces before an error are dropped here.
  std::string pieces;
  struct Sink : DiagnosticList {
    std::string* pieces;
    void report(const Diagnostic& diagnostic) override {
      if (diagnostic.severity == Severity::kError) pieces->clear();
      DiagnosticList::report(diagnostic);
    }
  } streamed_diagnostics;
  streamed_diagnostics.pieces = &pieces;
  std::vector<Visit> streamed;
  ElfSectionStream stream;
  stream.piece = [&](std::string_view piece) {
    FUZZ_CHECK(!piece.empty());
    pieces.append(piece);
  };
  stream.done = [&](const ElfSection& section) {
    FUZZ_CHECK(section.bytes.empty());
    check_status(section, pieces);
    streamed.push_back(Visit{section.label, section.status, pieces});
    pieces.clear();
  };
  const bool streamed_ok = for_each_elf_section_streamed_in_memory(image, "fuzz", section_name, stream,
                                                                   streamed_diagnostics);
  FUZZ_CHECK(streamed_ok == (streamed_diagnostics.error_count() == 0));
  FUZZ_CHECK(streamed_ok == whole_ok);
  FUZZ_CHECK(same(whole, streamed));
  // The same problems for the same ELFs. The messages may differ: decompressing whole into a buffer of the stated
  // size finds "more than stated" before corruption further on, which streaming reaches first.
  FUZZ_CHECK(whole_diagnostics.items.size() == streamed_diagnostics.items.size());
  for (size_t i = 0; i < whole_diagnostics.items.size(); ++i) {
    const Diagnostic& a = whole_diagnostics.items[i];
    const Diagnostic& b = streamed_diagnostics.items[i];
    FUZZ_CHECK(a.severity == b.severity && a.file == b.file && a.line == b.line);
  }
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view image = sampler::fuzz::as_text(data, size);
  sampler::fuzz::check(image, ".debug_site_info");
  sampler::fuzz::check(image, ".bss");
  (void)sampler::looks_like_elf_or_archive(image);
  sampler::DiagnosticList diagnostics;
  const auto info = sampler::read_elf_debug_info_in_memory(image, "fuzz", diagnostics);
  FUZZ_CHECK(info.has_value() == (diagnostics.error_count() == 0));
  if (info && !info->build_id.empty()) {
    const std::string_view id(reinterpret_cast<const char*>(info->build_id.data()), info->build_id.size());
    FUZZ_CHECK(id.size() <= image.size() && image.find(id) != std::string_view::npos);
  }
  return 0;
}
