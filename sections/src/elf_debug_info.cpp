// Build IDs and debug information of ELF files (see sections/elf_debug_info.h).
#include "sections/elf_debug_info.h"

#include <sys/mman.h>

#include <cstring>

#include "checked.h"
#include "elf_image.h"
#include "sections/hex.h"
#include "sections/input_files.h"

namespace sampler {
namespace {

using checked::ByteOrder;
using namespace elf;

// gABI: NT_GNU_BUILD_ID notes are named "GNU" (with its NUL, 4 bytes) and have type 3.
constexpr uint32_t kBuildIdType = 3;
constexpr std::string_view kGnuName("GNU\0", 4);

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

/// The build ID in a note section or segment's bytes, if one of its notes is NT_GNU_BUILD_ID. Notes are three
/// 32-bit words (name size, description size, type) in the file's byte order, then the name and the description,
/// each padded to `alignment` (4, or 8 for notes so aligned). A note that does not fit ends the search.
std::optional<std::vector<uint8_t>> find_build_id(std::string_view notes, ByteOrder order, uint64_t alignment) {
  checked::Reader reader(notes, order);
  for (;;) {
    auto name_size = reader.read<uint32_t>();
    auto description_size = reader.read<uint32_t>();
    auto type = reader.read<uint32_t>();
    if (!name_size || !description_size || !type) return std::nullopt;
    auto name = reader.bytes(*name_size);
    if (!name || !reader.skip(std::min<uint64_t>(align_up(*name_size, alignment) - *name_size, reader.remaining()))) {
      return std::nullopt;
    }
    auto description = reader.bytes(*description_size);
    if (!description) return std::nullopt;
    if (*type == kBuildIdType && *name == kGnuName && !description->empty()) {
      return std::vector<uint8_t>(description->begin(), description->end());
    }
    if (!reader.skip(std::min<uint64_t>(align_up(*description_size, alignment) - *description_size,
                                        reader.remaining()))) {
      return std::nullopt;
    }
  }
}

bool has_contents(const GElf_Shdr& shdr, std::string_view image) {
  return shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0 &&
         checked::range_fits(shdr.sh_offset, shdr.sh_size, image.size());
}

std::optional<ElfDebugInfo> read_elf(Elf* elf, const std::string& label, DiagnosticSink& sink) {
  if (elf_kind(elf) == ELF_K_AR) {
    sink.error(DiagnosticCode::kNotElf, label, 0, "an ar archive, not one ELF file: archives have no build ID");
    return std::nullopt;
  }
  const std::string_view image = raw_image(elf);
  if (std::string problem = check_elf_headers(image); !problem.empty() || elf_kind(elf) != ELF_K_ELF) {
    if (problem.empty()) problem = kNotElf;
    sink.error(problem == kNotElf ? DiagnosticCode::kNotElf : DiagnosticCode::kMalformedElf, label, 0, problem);
    return std::nullopt;
  }
  const ByteOrder order =
      static_cast<unsigned char>(image[EI_DATA]) == ELFDATA2MSB ? ByteOrder::kBig : ByteOrder::kLittle;
  ElfDebugInfo info;
  size_t names_index = 0;
  if (elf_getshdrstrndx(elf, &names_index) != 0) names_index = SHN_UNDEF;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = names_index != SHN_UNDEF ? elf_strptr(elf, names_index, shdr.sh_name) : nullptr;
    const std::string_view section = name != nullptr ? name : "";
    if ((section == ".debug_info" || section == ".zdebug_info") && has_contents(shdr, image)) info.has_dwarf = true;
    if (shdr.sh_type == SHT_SYMTAB && has_contents(shdr, image)) info.has_symbol_table = true;
    // The section's range is checked against the image before its bytes are looked at.
    if (shdr.sh_type == SHT_NOTE && info.build_id.empty() && has_contents(shdr, image)) {
      auto found = find_build_id(image.substr(shdr.sh_offset, shdr.sh_size), order, shdr.sh_addralign == 8 ? 8 : 4);
      if (found) info.build_id = std::move(*found);
    }
  }
  // A file without section headers (or whose note section was removed) may still have its PT_NOTE segments.
  size_t segments = 0;
  if (info.build_id.empty() && elf_getphdrnum(elf, &segments) == 0) {
    for (size_t i = 0; i < segments && info.build_id.empty(); ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) continue;
      if (!checked::range_fits(phdr.p_offset, phdr.p_filesz, image.size())) continue;
      auto found = find_build_id(image.substr(phdr.p_offset, phdr.p_filesz), order, phdr.p_align == 8 ? 8 : 4);
      if (found) info.build_id = std::move(*found);
    }
  }
  return info;
}

}  // namespace

std::optional<ElfDebugInfo> read_elf_debug_info(const std::string& path, DiagnosticSink& sink) {
  init_libelf();
  std::optional<InputFile> file = open_input(path, AcceptedKinds{}, sink);
  if (!file) return std::nullopt;
  if (file->size == 0) {
    sink.error(DiagnosticCode::kNotElf, path, 0, "not an ELF file (the file is empty)");
    return std::nullopt;
  }
  ElfHandle elf(elf_begin(file->fd.get(), ELF_C_READ_MMAP, nullptr));
  if (elf == nullptr) {
    sink.error(DiagnosticCode::kMalformedElf, path, 0, std::string("cannot read: ") + elf_errmsg(-1));
    return std::nullopt;
  }
  return read_elf(elf.get(), path, sink);
}

std::optional<ElfDebugInfo> read_elf_debug_info_in_memory(std::string_view image, const std::string& label,
                                                          DiagnosticSink& sink) {
  init_libelf();
  if (image.empty()) {
    sink.error(DiagnosticCode::kNotElf, label, 0, "not an ELF file (the file is empty)");
    return std::nullopt;
  }
  // Only headers and raw bytes are read: the image is never written (see elf_section.cpp's walk_memory).
  ElfHandle elf(elf_memory(const_cast<char*>(image.data()), image.size()));
  if (elf == nullptr) {
    sink.error(DiagnosticCode::kMalformedElf, label, 0, std::string("cannot read: ") + elf_errmsg(-1));
    return std::nullopt;
  }
  return read_elf(elf.get(), label, sink);
}

std::string build_id_entry(const std::vector<uint8_t>& build_id) {
  const std::string hex = hex_bytes(build_id);
  return ".build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
}

}  // namespace sampler
