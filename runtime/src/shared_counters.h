// Counters in a mapping that outlives the process (SAMPLER_SHARED_FD, docs/instrumenting.md section 2).
//
// A parent (sampler-run) creates a memfd, zero-filled, and passes it; the runtime maps it and, at each unit's
// registration, copies the unit's counters (values, bounds, timestamps) and the text the report needs (signature,
// scheme names, bound types) into a record appended to the mapping, then points the unit's schemes at the copy.
// From then on every sample lands in the mapping, so a parent that finds the process dead, whatever killed it, reads
// the counters as they were at the instant of death and writes them as an ordinary samples subreport, with the
// runtime's own report writer (write_shared_samples below).
//
// Layout (native byte order and alignment: the reader is the writer's parent, on the same machine), 8-aligned:
//   SharedHeader at offset 0;
//   records from header_bytes to `published`, each a SharedUnit, its scheme_count SharedScheme entries, then its
//   strings and arrays, every offset relative to the mapping's start and inside the record.
// Publication: a record is written whole, then `published` moves past it with a release store (and the header's
// magic last of all, at claim time), so a reader's acquire load of `published` sees only whole records: a
// process killed half-way through a registration leaves the previous, consistent state. Counters are 64-bit
// aligned words updated atomically: none is ever seen torn.
//
// Pure memory operations, no system call and no allocation: shared by the runtime (placement), by sampler-run
// (reading) and by the unit tests, over any buffer.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "report_writer.h"
#include "sampler/abi.h"

namespace sampler::runtime {

/// "SMPLSHM1" read as a little-endian word: set once the header is complete.
constexpr uint64_t kSharedMagic = 0x314d48534c504d53ull;
constexpr uint32_t kSharedVersion = 1;
/// The mapping's size bounds: the parent's memfd must be at least one page and at most 1 GiB.
constexpr uint64_t kSharedMinBytes = 4096;
constexpr uint64_t kSharedMaxBytes = uint64_t{1} << 30;
/// Whether a file of `bytes` can hold shared counters: the runtime maps no other, and readers trust no other.
constexpr bool shared_size_in_bounds(int64_t bytes) {
  return bytes >= static_cast<int64_t>(kSharedMinBytes) && bytes <= static_cast<int64_t>(kSharedMaxBytes);
}
/// %c in SAMPLER_FILE: the counters file is the report's name with this suffix, made this size by the runtime:
/// sparse, so only the pages the counters fill take room (sampler-run's memfd has the same size).
constexpr char kCountersSuffix[] = ".counters";
constexpr uint64_t kCountersFileBytes = uint64_t{64} << 20;

struct SharedHeader {
  uint64_t magic;           ///< kSharedMagic once claimed and complete (release store, the claim's last)
  uint32_t version;         ///< kSharedVersion
  uint32_t header_bytes;    ///< sizeof(SharedHeader): where the first record starts
  uint64_t capacity;        ///< bytes of the mapping the writer may fill
  int32_t owner;            ///< the process that claimed the mapping (compare-and-swap from 0)
  uint32_t units_left_out;  ///< units that did not fit: their counters stayed in their own memory
  uint64_t published;       ///< end of the whole records (release store after each)
};

struct SharedScheme {
  uint32_t site_count, columns, kind, reserved;
  uint64_t name;         ///< offset of the NUL-terminated name
  uint64_t values;       ///< offset of site_count * columns values
  uint64_t bound_types;  ///< offset of site_count bound types (bounds schemes), else 0
  uint64_t first, last;  ///< offsets of site_count timestamps, or 0
};

struct SharedUnit {
  uint64_t record_bytes;  ///< this record's size, with its schemes, strings and arrays (a multiple of 8)
  uint32_t scheme_count;
  uint32_t reserved;
  char signature[40];     ///< 32 hexadecimal digits and a NUL
  // followed by SharedScheme schemes[scheme_count]
};

/// The mapping as this process sees it. `base` is null when there is none.
struct SharedArea {
  unsigned char* base = nullptr;
  uint64_t size = 0;
};

/// The bytes a unit's record takes (0 if the unit is too large to describe in 64 bits).
uint64_t shared_record_bytes(const sampler_unit& unit);

/// Claims a zero-filled mapping for process `owner` and writes its header. False, with `problem` set, if the
/// mapping is too small or too large, or was already claimed (by another process given the same descriptor).
bool claim_shared_area(SharedArea& area, int32_t owner, const char*& problem);

/// Appends a (checked) unit's record, copying its current counters, publishes it, and points its schemes'
/// values, first and last at the copy. False if it does not fit (counted in units_left_out; the unit keeps its
/// own storage). The caller serialises calls (the registry lock). A unit whose storage already lies in the
/// mapping (registered again without being reloaded) keeps it and is not copied twice.
bool place_unit_in_shared_area(SharedArea& area, sampler_unit& unit);

/// True if `address` lies inside the mapping.
bool in_shared_area(const SharedArea& area, const void* address);

/// What a reader found in a mapping.
struct SharedSnapshot {
  bool claimed = false;         ///< a runtime claimed the mapping (else it was never used: no samples from it)
  uint64_t units = 0;           ///< unit records written out
  uint32_t units_left_out = 0;  ///< units the writer could not place
  const char* problem = nullptr;  ///< why reading stopped early (a malformed record), or nullptr
};

/// Writes the samples subreport (`<report id="samples">` ... `</report>`) of the published records of a mapping of
/// `size` bytes at `base`, through the report writer, every unit in registration order. Reads the header with
/// acquire loads and the counters with relaxed ones: a snapshot of a live process is consistent as well. Never
/// reads outside [base, base + size); a malformed record ends the walk (SharedSnapshot::problem). Writes nothing
/// when the mapping was never claimed.
SharedSnapshot write_shared_samples(const unsigned char* base, uint64_t size, ReportWriter& out);

}  // namespace sampler::runtime
