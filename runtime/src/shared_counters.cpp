// Counters in a shared mapping (see shared_counters.h): the record layout, its placement and its reading.
#include "shared_counters.h"

#include "atomic.h"

namespace sampler::runtime {
namespace {

constexpr uint64_t align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

uint64_t name_bytes(const char* name) { return align8(__builtin_strlen(name) + 1); }

SharedHeader* header_of(const SharedArea& area) { return reinterpret_cast<SharedHeader*>(area.base); }

/// Copies `count` words written concurrently by sampling threads (relaxed loads, so no torn word).
void copy_words(uint64_t* to, const uint64_t* from, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) store_relaxed(&to[i], load_relaxed(&from[i]));
}

}  // namespace

uint64_t shared_record_bytes(const sampler_unit& unit) {
  uint64_t bytes = sizeof(SharedUnit) + uint64_t{unit.scheme_count} * sizeof(SharedScheme);
  for (uint32_t i = 0; i < unit.scheme_count && bytes <= kSharedMaxBytes; ++i) {
    const sampler_scheme& s = unit.schemes[i];
    const uint64_t sites = s.site_count;
    bytes += name_bytes(s.name) + sites * s.columns * sizeof(uint64_t);  // columns <= 4096 (check_unit)
    if (s.kind == SAMPLER_SCHEME_BOUNDS) bytes += align8(sites);
    if (s.first != nullptr) bytes += sites * sizeof(uint64_t);
    if (s.last != nullptr) bytes += sites * sizeof(uint64_t);
  }
  return bytes <= kSharedMaxBytes ? bytes : 0;
}

bool claim_shared_area(SharedArea& area, int32_t owner, const char*& problem) {
  if (area.base == nullptr || area.size < kSharedMinBytes || area.size > kSharedMaxBytes) {
    problem = "the mapping is smaller than a page or larger than 1 GiB";
    return false;
  }
  SharedHeader* header = header_of(area);
  int32_t expected = 0;
  if (load_acquire(&header->magic) != 0 || !compare_exchange(&header->owner, expected, owner)) {
    problem = "the mapping is already used by another process";
    return false;
  }
  header->version = kSharedVersion;
  header->header_bytes = sizeof(SharedHeader);
  header->capacity = area.size;
  store_relaxed(&header->units_left_out, uint32_t{0});
  store_relaxed(&header->published, uint64_t{sizeof(SharedHeader)});
  store_release(&header->magic, kSharedMagic);
  return true;
}

bool in_shared_area(const SharedArea& area, const void* address) {
  auto a = reinterpret_cast<uintptr_t>(address), start = reinterpret_cast<uintptr_t>(area.base);
  return area.base != nullptr && a >= start && a - start < area.size;
}

bool place_unit_in_shared_area(SharedArea& area, sampler_unit& unit) {
  if (area.base == nullptr) return false;
  for (uint32_t i = 0; i < unit.scheme_count; ++i) {
    if (in_shared_area(area, unit.schemes[i].values)) return true;
  }
  SharedHeader* header = header_of(area);
  const uint64_t start = load_relaxed(&header->published);  // the caller is the only writer
  const uint64_t bytes = shared_record_bytes(unit);
  if (bytes == 0 || start > header->capacity || bytes > header->capacity - start) {
    fetch_add_relaxed(&header->units_left_out, uint32_t{1});
    return false;
  }
  unsigned char* record = area.base + start;
  auto* shared_unit = reinterpret_cast<SharedUnit*>(record);
  shared_unit->record_bytes = bytes;
  shared_unit->scheme_count = unit.scheme_count;
  shared_unit->reserved = 0;
  __builtin_memset(shared_unit->signature, 0, sizeof shared_unit->signature);
  __builtin_memcpy(shared_unit->signature, unit.signature, 32);
  auto* schemes = reinterpret_cast<SharedScheme*>(record + sizeof(SharedUnit));
  uint64_t next = start + sizeof(SharedUnit) + uint64_t{unit.scheme_count} * sizeof(SharedScheme);
  // Takes `size` bytes of the record; returns their offset.
  auto take = [&next](uint64_t size) {
    uint64_t offset = next;
    next += size;
    return offset;
  };
  for (uint32_t i = 0; i < unit.scheme_count; ++i) {
    const sampler_scheme& s = unit.schemes[i];
    SharedScheme& d = schemes[i];
    const uint64_t sites = s.site_count;
    d = SharedScheme{s.site_count, s.columns, s.kind, 0, 0, 0, 0, 0, 0};
    d.name = take(name_bytes(s.name));
    __builtin_memcpy(area.base + d.name, s.name, __builtin_strlen(s.name) + 1);
    d.values = take(sites * s.columns * sizeof(uint64_t));
    copy_words(reinterpret_cast<uint64_t*>(area.base + d.values), s.values, sites * s.columns);
    if (s.kind == SAMPLER_SCHEME_BOUNDS) {
      d.bound_types = take(align8(sites));
      __builtin_memcpy(area.base + d.bound_types, s.bound_types, sites);
    }
    if (s.first != nullptr) {
      d.first = take(sites * sizeof(uint64_t));
      copy_words(reinterpret_cast<uint64_t*>(area.base + d.first), s.first, sites);
    }
    if (s.last != nullptr) {
      d.last = take(sites * sizeof(uint64_t));
      copy_words(reinterpret_cast<uint64_t*>(area.base + d.last), s.last, sites);
    }
  }
  store_release(&header->published, start + bytes);
  // From here on the unit counts in the mapping. A sample taken by another thread between the copy above and
  // these stores would be lost: registration runs in the unit's constructor, before its code is reachable.
  for (uint32_t i = 0; i < unit.scheme_count; ++i) {
    sampler_scheme& s = unit.schemes[i];
    const SharedScheme& d = schemes[i];
    store_release(&s.values, reinterpret_cast<uint64_t*>(area.base + d.values));
    if (d.first != 0) store_release(&s.first, reinterpret_cast<uint64_t*>(area.base + d.first));
    if (d.last != 0) store_release(&s.last, reinterpret_cast<uint64_t*>(area.base + d.last));
  }
  return true;
}

namespace {

/// A region of `bytes` at `offset` lies inside the record [start, end) (and is 8-aligned when `aligned`).
bool inside(uint64_t offset, uint64_t bytes, uint64_t start, uint64_t end, bool aligned) {
  return offset >= start && offset <= end && bytes <= end - offset && (!aligned || offset % 8 == 0);
}

}  // namespace

SharedSnapshot write_shared_samples(const unsigned char* base, uint64_t size, ReportWriter& out) {
  SharedSnapshot snapshot;
  if (base == nullptr || size < sizeof(SharedHeader)) return snapshot;
  const auto* header = reinterpret_cast<const SharedHeader*>(base);
  if (load_acquire(&header->magic) != kSharedMagic) return snapshot;
  snapshot.claimed = true;
  snapshot.units_left_out = load_relaxed(&header->units_left_out);
  const uint64_t published = load_acquire(&header->published);
  if (header->version != kSharedVersion || header->header_bytes != sizeof(SharedHeader) || published > size ||
      published < sizeof(SharedHeader) || published % 8 != 0) {
    snapshot.problem = "the mapping's header is malformed";
    return snapshot;
  }
  out.append("<report id=\"samples\">");
  out.end_line();
  uint64_t start = sizeof(SharedHeader);
  while (start < published && snapshot.problem == nullptr) {
    const auto* unit = reinterpret_cast<const SharedUnit*>(base + start);
    const uint64_t left = published - start;
    if (left < sizeof(SharedUnit)) {
      snapshot.problem = "a unit record is malformed";
      break;
    }
    const uint64_t bytes = unit->record_bytes;
    const uint64_t table = sizeof(SharedUnit) + uint64_t{unit->scheme_count} * sizeof(SharedScheme);
    if (bytes < table || bytes > left || bytes % 8 != 0 || unit->signature[32] != '\0') {
      snapshot.problem = "a unit record is malformed";
      break;
    }
    const uint64_t end = start + bytes;
    const auto* schemes = reinterpret_cast<const SharedScheme*>(base + start + sizeof(SharedUnit));
    for (uint32_t i = 0; i < unit->scheme_count; ++i) {
      const SharedScheme& d = schemes[i];
      const uint64_t sites = d.site_count;
      const bool bounds = d.kind == SAMPLER_SCHEME_BOUNDS;
      // A name ends inside the record; columns are checked before they multiply anything.
      bool ok = d.columns >= 1 && d.columns <= 4096 && inside(d.name, 1, start, end, false) &&
                __builtin_memchr(base + d.name, '\0', end - d.name) != nullptr &&
                inside(d.values, sites * d.columns * sizeof(uint64_t), start, end, true) &&
                (!bounds || inside(d.bound_types, sites, start, end, false)) &&
                (d.first == 0 || inside(d.first, sites * sizeof(uint64_t), start, end, true)) &&
                (d.last == 0 || inside(d.last, sites * sizeof(uint64_t), start, end, true));
      sampler_scheme scheme{};
      sampler_unit one{};
      if (ok) {
        // The runtime's own description of a scheme, over the mapping's storage: the report writer writes it as
        // it writes the live unit's (it only reads the values).
        auto words = [base](uint64_t offset) {
          return offset == 0 ? nullptr : const_cast<uint64_t*>(reinterpret_cast<const uint64_t*>(base + offset));
        };
        scheme = sampler_scheme{reinterpret_cast<const char*>(base + d.name), d.site_count, d.columns, d.kind, 0,
                                words(d.values), bounds ? base + d.bound_types : nullptr, words(d.first),
                                words(d.last)};
        one = sampler_unit{SAMPLER_ABI_VERSION, 1, unit->signature, &scheme, nullptr, 0};
        ok = check_unit(one) == nullptr;
      }
      if (!ok) {
        snapshot.problem = "a scheme record is malformed";
        break;
      }
      write_scheme(out, unit->signature, scheme);
    }
    if (snapshot.problem == nullptr) ++snapshot.units;
    start = end;
  }
  out.append("</report>");
  out.end_line();
  return snapshot;
}

}  // namespace sampler::runtime
