// The loaded ELF objects of this process, found without the dynamic loader (docs/formats.md section 3, main-backtrace).
//
// dl_iterate_phdr takes the loader's lock, which the crashing code may hold, so the crash path reads
// /proc/self/maps with raw system calls into static tables and takes every ELF header, program header and build
// ID note from the memory already mapped, checking each read against the readable mappings first.
// Signal-safe (module_map_signal_safe.cpp): no allocation, no libc, bounded loops. Not reentrant: one crash at a
// time (the crash handler guarantees it).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "report_writer.h"

namespace sampler::runtime {

/// One line of /proc/self/maps.
struct Mapping {
  uint64_t start;
  uint64_t end;
  uint64_t offset;
  uint64_t device;  ///< major << 32 | minor
  uint64_t inode;
  bool readable;
  uint32_t path_offset;  ///< into the path pool
  uint32_t path_length;  ///< 0: anonymous
};

/// Reads /proc/self/maps into the static table, replacing what was there. Returns false if it cannot be read.
/// Mappings beyond the table's capacity (8192) are dropped.
bool read_mappings();

/// The page size used to round segments (from getauxval(AT_PAGESZ) at start-up; 4096 until set).
void set_page_size(uint64_t size);

/// The table read last, sorted by address.
const Mapping* mappings(size_t& count);

/// True if [address, address + size) lies in readable mappings (adjacent ones may together cover it).
bool is_readable(uint64_t address, uint64_t size);

/// Copies `size` bytes at `address` into `out` without risking a fault: through process_vm_readv on this
/// process, which fails with EFAULT where a plain read would raise SIGSEGV or SIGBUS (a file mapping past the end
/// of its file). Where that system call is not allowed, falls back to a plain copy of memory is_readable() says
/// is mapped. Needs read_mappings() only for the fallback.
bool read_memory(uint64_t address, void* out, size_t size);

/// The mapping that contains `address`, or nullptr.
const Mapping* find_mapping(uint64_t address);

/// Writes `{{{reset}}}`, then for each loaded ELF object `{{{module:...}}}` and one `{{{mmap:...}}}` per loadable
/// segment (page-rounded without overlaps), or a plain line for an object without a build ID; one line each.
/// Uses the table read last.
void write_module_markup(ReportWriter& out);

/// Parses one maps line (without its newline) into `mapping`, storing the path in `path` (`path_capacity`
/// bytes; longer paths are cut). Exposed for tests. Returns false for a malformed line.
bool parse_maps_line(const char* line, size_t length, Mapping& mapping, char* path, size_t path_capacity);

}  // namespace sampler::runtime
