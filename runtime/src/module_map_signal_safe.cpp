// Loaded ELF objects from /proc/self/maps and the program headers in memory (see module_map.h).
// Signal-safe: raw system calls, static tables, every memory read checked against the readable mappings.
#include "module_map.h"

#include <elf.h>
#include <sys/uio.h>

#include "raw_syscall.h"
#include "sections/core/char_buffer.h"
#include "sections/core/markup_writer.h"

namespace sampler::runtime {
namespace {

#if __SIZEOF_POINTER__ == 8
using ElfHeader = Elf64_Ehdr;
using ProgramHeader = Elf64_Phdr;
using NoteHeader = Elf64_Nhdr;
constexpr unsigned char kElfClass = ELFCLASS64;
#else
using ElfHeader = Elf32_Ehdr;
using ProgramHeader = Elf32_Phdr;
using NoteHeader = Elf32_Nhdr;
constexpr unsigned char kElfClass = ELFCLASS32;
#endif

constexpr size_t kMaxMappings = 8192;
constexpr size_t kPathPoolSize = 512 * 1024;
constexpr size_t kMaxProgramHeaders = 512;
constexpr size_t kMaxBuildId = 64;
constexpr size_t kMaxNotesBytes = 64 * 1024;

Mapping g_mappings[kMaxMappings];
ProgramHeader g_segments[kMaxProgramHeaders];
uint8_t g_notes[kMaxNotesBytes];
size_t g_mapping_count = 0;
char g_paths[kPathPoolSize];
char g_read_buffer[16 * 1024];
char g_line[8192];

uint64_t g_page_size = 4096;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Reads hexadecimal digits at line[position...]; false if there are none or more than 16.
bool read_hex(const char* line, size_t length, size_t& position, uint64_t& value) {
  value = 0;
  size_t digits = 0;
  while (position < length && hex_value(line[position]) >= 0) {
    if (++digits > 16) return false;
    value = (value << 4) | static_cast<uint64_t>(hex_value(line[position++]));
  }
  return digits > 0;
}

bool expect(const char* line, size_t length, size_t& position, char c) {
  if (position >= length || line[position] != c) return false;
  ++position;
  return true;
}

uint64_t page_down(uint64_t address) { return address & ~(g_page_size - 1); }
uint64_t page_up(uint64_t address) { return (address + g_page_size - 1) & ~(g_page_size - 1); }

bool same_file(const Mapping& a, const Mapping& b) { return a.device == b.device && a.inode == b.inode; }

}  // namespace

bool parse_maps_line(const char* line, size_t length, Mapping& mapping, char* path, size_t path_capacity) {
  // "START-END PERM OFFSET MAJOR:MINOR INODE   PATH" (proc(5)); PATH may hold spaces and is optional.
  size_t p = 0;
  uint64_t major = 0, minor = 0;
  mapping = Mapping{};
  if (!read_hex(line, length, p, mapping.start) || !expect(line, length, p, '-') ||
      !read_hex(line, length, p, mapping.end) || !expect(line, length, p, ' ')) {
    return false;
  }
  if (p + 4 >= length) return false;
  mapping.readable = line[p] == 'r';
  p += 4;
  if (!expect(line, length, p, ' ') || !read_hex(line, length, p, mapping.offset) ||
      !expect(line, length, p, ' ') || !read_hex(line, length, p, major) || !expect(line, length, p, ':') ||
      !read_hex(line, length, p, minor) || !expect(line, length, p, ' ')) {
    return false;
  }
  mapping.device = (major << 32) | minor;
  if (p >= length || line[p] < '0' || line[p] > '9') return false;
  while (p < length && line[p] >= '0' && line[p] <= '9') mapping.inode = mapping.inode * 10 + (line[p++] - '0');
  while (p < length && line[p] == ' ') ++p;
  size_t n = length - p;
  if (n > path_capacity) n = path_capacity;
  for (size_t i = 0; i < n; ++i) path[i] = line[p + i];
  mapping.path_length = static_cast<uint32_t>(n);
  return mapping.end > mapping.start;
}

bool read_mappings() {
  g_mapping_count = 0;
  long fd = sys::open_read_only("/proc/self/maps");
  if (fd < 0) return false;
  size_t path_used = 0;
  size_t line_length = 0;
  bool line_too_long = false;
  for (;;) {
    long got = sys::read(static_cast<int>(fd), g_read_buffer, sizeof g_read_buffer);
    if (got == -EINTR) continue;
    if (got <= 0) break;
    for (long i = 0; i < got; ++i) {
      char c = g_read_buffer[i];
      if (c != '\n') {
        if (line_length < sizeof g_line) {
          g_line[line_length++] = c;
        } else {
          line_too_long = true;
        }
        continue;
      }
      if (!line_too_long && g_mapping_count < kMaxMappings) {
        Mapping& m = g_mappings[g_mapping_count];
        if (parse_maps_line(g_line, line_length, m, g_paths + path_used, kPathPoolSize - path_used)) {
          m.path_offset = static_cast<uint32_t>(path_used);
          // Only the first mapping of a file names a module: keep its path, reuse the pool for the others.
          if (m.offset == 0) path_used += m.path_length;
          ++g_mapping_count;
        }
      }
      line_length = 0;
      line_too_long = false;
    }
  }
  sys::close(static_cast<int>(fd));
  return g_mapping_count > 0;
}

void set_page_size(uint64_t size) {
  if (size >= 1024 && (size & (size - 1)) == 0) g_page_size = size;
}

const Mapping* mappings(size_t& count) {
  count = g_mapping_count;
  return g_mappings;
}

const Mapping* find_mapping(uint64_t address) {
  size_t low = 0, high = g_mapping_count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    const Mapping& m = g_mappings[middle];
    if (address < m.start) {
      high = middle;
    } else if (address >= m.end) {
      low = middle + 1;
    } else {
      return &m;
    }
  }
  return nullptr;
}

bool is_readable(uint64_t address, uint64_t size) {
  if (size == 0) return true;
  uint64_t end = address + size;
  if (end < address) return false;
  while (address < end) {
    const Mapping* m = find_mapping(address);
    if (m == nullptr || !m->readable) return false;
    address = m->end;
  }
  return true;
}

bool read_memory(uint64_t address, void* out, size_t size) {
  if (size == 0) return true;
  struct iovec local {out, size};
  struct iovec remote {reinterpret_cast<void*>(address), size};
  long got = sys::call6(SYS_process_vm_readv, sys::getpid(), reinterpret_cast<long>(&local), 1,
                        reinterpret_cast<long>(&remote), 1, 0);
  if (got == static_cast<long>(size)) return true;
  if (got != -ENOSYS && got != -EPERM) return false;
  // Not allowed here (a seccomp filter): plain copy of what the maps say is readable.
  if (!is_readable(address, size)) return false;
  __builtin_memcpy(out, reinterpret_cast<const void*>(address), size);
  return true;
}

namespace {

/// The NT_GNU_BUILD_ID of a PT_NOTE segment in memory, copied into `id` (kMaxBuildId bytes); returns its
/// length, or 0.
size_t find_build_id(uint64_t address, uint64_t size, uint8_t* id) {
  if (size > kMaxNotesBytes || !read_memory(address, g_notes, size)) return 0;
  uint64_t position = 0;
  while (position + sizeof(NoteHeader) <= size) {
    NoteHeader note;
    __builtin_memcpy(&note, g_notes + position, sizeof note);
    uint64_t name_size = (uint64_t{note.n_namesz} + 3) & ~uint64_t{3};
    uint64_t descriptor_size = (uint64_t{note.n_descsz} + 3) & ~uint64_t{3};
    uint64_t descriptor = position + sizeof(NoteHeader) + name_size;
    if (descriptor + descriptor_size > size) return 0;
    const uint8_t* name = g_notes + position + sizeof(NoteHeader);
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && name[0] == 'G' && name[1] == 'N' &&
        name[2] == 'U' && name[3] == '\0' && note.n_descsz > 0 && note.n_descsz <= kMaxBuildId) {
      __builtin_memcpy(id, g_notes + descriptor, note.n_descsz);
      return note.n_descsz;
    }
    position = descriptor + descriptor_size;
  }
  return 0;
}

/// True if the file part of a loadable segment is mapped from the module's file at the matching offset: a file
/// the program merely mmap()ed (an ELF it reads as data) is not a loaded object and must not become a module.
bool segment_is_loaded(const Mapping& first, uint64_t bias, const ProgramHeader& segment) {
  if (segment.p_filesz == 0) return true;
  const Mapping* m = find_mapping(page_down(bias + segment.p_vaddr));
  return m != nullptr && same_file(*m, first) && m->offset == page_down(segment.p_offset);
}

/// Writes the module (or the plain line for an object without a build ID). True if a module element with `id`
/// was written.
bool write_module(ReportWriter& out, uint64_t id, const Mapping& first) {
  const char* path = g_paths + first.path_offset;
  const uint64_t start = first.start;
  // Every read goes through read_memory: a file the program mapped may be shorter than its mapping (SIGBUS).
  ElfHeader header;
  if (!read_memory(start, &header, sizeof header)) return false;
  if (header.e_ident[EI_MAG0] != ELFMAG0 || header.e_ident[EI_MAG1] != ELFMAG1 ||
      header.e_ident[EI_MAG2] != ELFMAG2 || header.e_ident[EI_MAG3] != ELFMAG3 ||
      header.e_ident[EI_CLASS] != kElfClass || (header.e_type != ET_EXEC && header.e_type != ET_DYN) ||
      header.e_phentsize != sizeof(ProgramHeader) || header.e_phnum == 0 || header.e_phnum > kMaxProgramHeaders) {
    return false;
  }
  uint64_t table = start + header.e_phoff;
  const size_t count = header.e_phnum;
  if (table < start || !read_memory(table, g_segments, count * sizeof(ProgramHeader))) return false;
  const ProgramHeader* segments = g_segments;

  // The load bias: the mapping at file offset 0 holds the first loadable segment's first page.
  const ProgramHeader* first_load = nullptr;
  for (size_t i = 0; i < count && first_load == nullptr; ++i) {
    if (segments[i].p_type == PT_LOAD) first_load = &segments[i];
  }
  if (first_load == nullptr) return false;
  const uint64_t bias = start + page_down(first_load->p_offset) - page_down(first_load->p_vaddr);
  for (size_t i = 0; i < count; ++i) {
    if (segments[i].p_type == PT_LOAD && !segment_is_loaded(first, bias, segments[i])) return false;
  }

  uint8_t build_id[kMaxBuildId];
  size_t build_id_length = 0;
  for (size_t i = 0; i < count && build_id_length == 0; ++i) {
    if (segments[i].p_type == PT_NOTE) {
      build_id_length = find_build_id(bias + segments[i].p_vaddr, segments[i].p_filesz, build_id);
    }
  }

  char storage[sizeof g_line + 256];  // the longest path and the element around it
  CharBuffer line(storage, sizeof storage);
  if (build_id_length == 0) {
    // llvm-symbolizer rejects an empty build ID (docs/formats.md section 3): name the object and its range as text.
    uint64_t low = ~uint64_t{0}, high = 0;
    for (size_t i = 0; i < count; ++i) {
      if (segments[i].p_type != PT_LOAD) continue;
      if (page_down(bias + segments[i].p_vaddr) < low) low = page_down(bias + segments[i].p_vaddr);
      if (page_up(bias + segments[i].p_vaddr + segments[i].p_memsz) > high) {
        high = page_up(bias + segments[i].p_vaddr + segments[i].p_memsz);
      }
    }
    line.append("module without build ID: ");
    line.append(path, first.path_length);
    line.append(' ');
    markup::append_address(line, low);
    line.append('-');
    markup::append_address(line, high);
    out.append(line.data(), line.size());
    out.end_line();
    return false;
  }
  markup::write_module(line, id, path, first.path_length, build_id, build_id_length);
  out.append(line.data(), line.size());
  out.end_line();

  // One mmap element per loadable segment, START rounded down and END up to pages; a segment that would overlap
  // the previous one after rounding starts where that one ends (llvm-symbolizer rejects overlaps: docs/formats.md 3.2).
  uint64_t previous_end = 0;
  for (size_t i = 0; i < count; ++i) {
    const ProgramHeader& segment = segments[i];
    if (segment.p_type != PT_LOAD) continue;
    char flags[4];
    size_t n = 0;
    if (segment.p_flags & PF_R) flags[n++] = 'r';
    if (segment.p_flags & PF_W) flags[n++] = 'w';
    if (segment.p_flags & PF_X) flags[n++] = 'x';
    flags[n] = '\0';
    if (n == 0) continue;
    uint64_t low = page_down(bias + segment.p_vaddr);
    uint64_t high = page_up(bias + segment.p_vaddr + segment.p_memsz);
    if (low < previous_end) low = previous_end;
    if (low >= high) continue;
    line.clear();
    markup::write_mmap(line, low, high - low, id, flags, low - bias);
    out.append(line.data(), line.size());
    out.end_line();
    previous_end = high;
  }
  return true;
}

}  // namespace

void write_module_markup(ReportWriter& out) {
  out.append("{{{reset}}}");
  out.end_line();
  uint64_t id = 0;
  for (size_t i = 0; i < g_mapping_count; ++i) {
    const Mapping& m = g_mappings[i];
    if (m.offset != 0 || m.path_length == 0 || !m.readable) continue;
    const char* path = g_paths + m.path_offset;
    // Pseudo-files other than the vDSO ([heap], [stack], [vvar]...) are not ELF objects.
    if (path[0] == '[' && !(m.path_length == 6 && __builtin_memcmp(path, "[vdso]", 6) == 0)) continue;
    if (write_module(out, id, m)) ++id;
  }
}

}  // namespace sampler::runtime
