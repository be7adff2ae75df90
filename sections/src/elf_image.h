// What the ELF readers of the formats library share (private): libelf set-up, the header checks made before
// libelf is trusted with an image, and the magic bytes. Defined in elf_section.cpp.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sampler::elf {

inline constexpr std::string_view kElfMagic =
    "\x7f"
    "ELF";
inline constexpr std::string_view kArMagic = "!<arch>\n";
inline constexpr std::string_view kNotElf = "not an ELF file or ar archive";

/// elf_version(), once per process, before any other libelf call (thread-safe).
void init_libelf();

struct ElfDeleter {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfHandle = std::unique_ptr<Elf, ElfDeleter>;

/// The bytes libelf reads `elf` from (a mapping, or the image given to elf_memory).
std::string_view raw_image(Elf* elf);

/// Checks what libelf will rely on: identification, header size, the section header table and the section name
/// table all inside the image. Returns a description of the first problem (kNotElf when the image does not start
/// like ELF), or an empty string.
std::string check_elf_headers(std::string_view image);

/// "0x1f": a number for messages.
std::string hex(uint64_t value);

}  // namespace sampler::elf
