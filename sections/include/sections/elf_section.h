// Reading one named section out of ELF files and ar archives, with libelf (docs/tools.md, extract-section).
//
// Accepts executables, shared libraries, relocatable objects and ar archives (each member in order), ELF32 or
// ELF64, either byte order. SHF_COMPRESSED sections (zlib, zstd) and legacy .zdebug_* sections ("ZLIB" header
// and 8-byte big-endian size) are decompressed; a request for ".debug_X" also finds ".zdebug_X". Every size is
// checked before anything is allocated: a section past the end of its file, or a compressed section whose stated
// size is over kMaxExpansion times the input or over kMaxDecompressedSize, is an error, never a crash.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"

namespace sampler {

/// What was found for one ELF (the file itself, or one archive member).
struct ElfSection {
  /// kEmpty: the section is there but holds no byte other than NUL (size 0, SHT_NOBITS, or only padding).
  enum class Status { kFound, kMissing, kEmpty };
  std::string label;       ///< "path" or "path(member.o)" for archive members
  Status status = Status::kMissing;
  std::string_view bytes;  ///< kFound: decompressed contents, NUL bytes still in; valid only during the call
};

constexpr uint64_t kMaxExpansion = 1000;                   ///< decompressed size limit relative to the input
constexpr uint64_t kMaxDecompressedSize = 4ull << 30;      ///< absolute decompressed size limit

/// Visits every ELF in the file at `path` and passes the named section to `visit`. Errors (unreadable file,
/// not ELF nor archive, malformed ELF or member, bad compressed data) are reported to `sink` naming the file or
/// member; the other members are still visited. Returns true if no error was reported.
bool for_each_elf_section(const std::string& path, std::string_view section_name,
                          const std::function<void(const ElfSection&)>& visit, DiagnosticSink& sink);

/// The same over an image in memory (tests, fuzzing); `label` names it in diagnostics and ElfSection::label.
bool for_each_elf_section_in_memory(std::string_view image, const std::string& label,
                                    std::string_view section_name,
                                    const std::function<void(const ElfSection&)>& visit, DiagnosticSink& sink);

/// Receives one section in pieces, for for_each_elf_section_streamed.
struct ElfSectionStream {
  /// Called with consecutive pieces of the section of one ELF, in order, NUL bytes still in: an uncompressed
  /// section as one view into the mapped file, a compressed one in pieces of at most kStreamPieceSize bytes as it
  /// is decompressed. A piece is valid only during the call.
  std::function<void(std::string_view piece)> piece;
  /// Called once per ELF after its pieces, as for_each_elf_section's visit is, but with `bytes` empty.
  std::function<void(const ElfSection&)> done;
};

constexpr size_t kStreamPieceSize = 256u << 10;  ///< largest piece of a compressed section passed to a stream

/// Like for_each_elf_section, but passes each section on in pieces, so that a compressed section goes through a
/// small buffer (that stays in the processor's cache) instead of one allocation of its decompressed size: what
/// extract-section uses. All headers of an ELF (section ranges, compression headers, stated sizes against the
/// limits) are checked before its first piece is passed on. Damage inside compressed data, though, is found only
/// while decompressing: then the pieces already passed stand, the error is reported, and `done` is not called
/// for that ELF.
bool for_each_elf_section_streamed(const std::string& path, std::string_view section_name,
                                   const ElfSectionStream& stream, DiagnosticSink& sink);

/// The streamed form over an image in memory (fuzzing, tests): the same checks, pieces and diagnostics as
/// for_each_elf_section_streamed on a file holding `image`.
bool for_each_elf_section_streamed_in_memory(std::string_view image, const std::string& label,
                                             std::string_view section_name, const ElfSectionStream& stream,
                                             DiagnosticSink& sink);

/// True if the file starts like an ELF file or an ar archive (used to tell them from .sites text).
bool looks_like_elf_or_archive(std::string_view first_bytes);

/// Calls write for each maximal run of bytes without NUL bytes (the extraction's normalisation).
void for_each_non_nul_span(std::string_view bytes, const std::function<void(std::string_view)>& write);

}  // namespace sampler
