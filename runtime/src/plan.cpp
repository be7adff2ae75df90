// SAMPLER_PLAN: reading the plan, applying it to units (see plan.h).
#include "plan.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

#include "atomic.h"
#include "log.h"
#include "sampling.h"
#include "sections/core/char_buffer.h"
#include "sections/core/plan.h"
#include "sections/scheme_table.h"

namespace sampler::runtime {
namespace {

struct PlanEntry {
  uint8_t unit[16];
  uint32_t scheme;  ///< its index in the scheme table (sections/scheme_table.h)
  uint32_t site;
  int64_t weight;
};

struct Plan {
  int64_t uniform_weight = 0;  ///< of the sites the plan does not name
  PlanEntry* entries = nullptr;  ///< sorted by (unit, scheme, site)
  size_t entry_count = 0;
};
Plan g_plan;

int hex_value(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

/// 32 lower-case hex digits to 16 bytes; false if `text` is not such.
bool signature_bytes(const char* text, size_t length, uint8_t (&bytes)[16]) {
  if (length != 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    int high = hex_value(text[2 * i]), low = hex_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    bytes[i] = static_cast<uint8_t>(high * 16 + low);
  }
  return true;
}

int compare(const PlanEntry& a, const PlanEntry& b) {
  int c = memcmp(a.unit, b.unit, sizeof a.unit);
  if (c != 0) return c;
  if (a.scheme != b.scheme) return a.scheme < b.scheme ? -1 : 1;
  if (a.site != b.site) return a.site < b.site ? -1 : 1;
  return 0;
}

/// Heapsort: in place, no allocation, n log n whatever the order of the file.
void sort_entries(PlanEntry* e, size_t n) {
  auto sift = [e](size_t root, size_t end) {
    while (2 * root + 1 < end) {
      size_t child = 2 * root + 1;
      if (child + 1 < end && compare(e[child], e[child + 1]) < 0) ++child;
      if (compare(e[root], e[child]) >= 0) return;
      PlanEntry t = e[root];
      e[root] = e[child];
      e[child] = t;
      root = child;
    }
  };
  for (size_t i = n / 2; i-- > 0;) sift(i, n);
  for (size_t end = n; end > 1; --end) {
    PlanEntry t = e[0];
    e[0] = e[end - 1];
    e[end - 1] = t;
    sift(0, end - 1);
  }
}

/// The file name as it may be printed: control characters become '?' (the name comes from the environment).
void printable(const char* text, char* out, size_t capacity) {
  size_t n = 0;
  for (; text[n] != '\0' && n + 1 < capacity; ++n) {
    unsigned char c = static_cast<unsigned char>(text[n]);
    out[n] = c < 0x20 || c == 0x7f ? '?' : text[n];
  }
  out[n] = '\0';
}

/// One line: "SAMPLER_PLAN: FILE[:LINE]: why; sampling uniformly".
void refuse(const char* name, uint32_t line, const char* why) {
  char number[16] = {};
  if (line != 0) {
    number[0] = ':';
    format_decimal(line, number + 1, sizeof number - 2);
  }
  say("SAMPLER_PLAN: ", name, number, ": ", why, "; the plan is not used, sampling is uniform");
}

/// Calls on_line(line) for each line of text (without its '\n'); stops when it returns false.
template <typename OnLine>
void for_each_line(const char* text, size_t size, OnLine&& on_line) {
  size_t start = 0;
  while (start < size) {
    const void* newline = memchr(text + start, '\n', size - start);
    size_t end = newline ? static_cast<size_t>(static_cast<const char*>(newline) - text) : size;
    if (!on_line(std::string_view(text + start, end - start))) return;
    start = end + 1;
  }
}

/// a + b, at most kCertainWeight (both in [0, kCertainWeight]).
uint64_t add_saturated(uint64_t a, uint64_t b) {
  return a + b > static_cast<uint64_t>(kCertainWeight) ? static_cast<uint64_t>(kCertainWeight) : a + b;
}

/// a * b, at most kCertainWeight.
uint64_t multiply_saturated(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > static_cast<uint64_t>(kCertainWeight))
    return static_cast<uint64_t>(kCertainWeight);
  return product;
}

}  // namespace

int64_t weight_of_probability(double p) {
  if (!(p > 0)) return 0;
  if (p >= 1) return kCertainWeight;
  double weight = -natural_log1p(-p) * kClockUnitsPerNat + 0.5;
  return weight < static_cast<double>(kCertainWeight) ? static_cast<int64_t>(weight) : kCertainWeight;
}

bool load_plan(const char* path, const char* sparsity_text, double sparsity, bool verbose) {
  char name[512];
  printable(path, name, sizeof name);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    refuse(name, 0, strerror(errno));
    return false;
  }
  struct stat status {};
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    close(fd);
    refuse(name, 0, "not a regular file");
    return false;
  }
  if (static_cast<uint64_t>(status.st_size) > kMaxPlanBytes) {
    close(fd);
    refuse(name, 0, "larger than 64 MiB");
    return false;
  }
  size_t size = static_cast<size_t>(status.st_size);
  const char* text = "";
  void* mapping = MAP_FAILED;
  if (size > 0) {
    mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      close(fd);
      refuse(name, 0, "cannot be mapped");
      return false;
    }
    text = static_cast<const char*>(mapping);
  }
  close(fd);

  // First pass: every line checked, the id kept, the entries counted.
  plan::Reader reader;
  const char* error = nullptr;
  size_t entries = 0;
  for_each_line(text, size, [&](std::string_view line) {
    plan::Line parsed = reader.next(line);
    if (parsed.kind == plan::LineKind::malformed) {
      error = parsed.error;
      return false;
    }
    if (parsed.kind == plan::LineKind::id) {
      memcpy(g_plan_identity.id, parsed.id.data(), parsed.id.size());
      g_plan_identity.id[parsed.id.size()] = '\0';
    }
    entries += parsed.kind == plan::LineKind::entry;
    return true;
  });
  uint32_t error_line = reader.line_number();
  if (error == nullptr) {
    error = reader.finish();
    if (error != nullptr && reader.line_number() == 0) error_line = 1;
  }
  // Second pass: the entries, with their weights, into memory of their own.
  PlanEntry* kept = nullptr;
  if (error == nullptr && entries > 0) {
    void* memory = mmap(nullptr, entries * sizeof(PlanEntry), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    if (memory == MAP_FAILED) {
      error = "no memory for its entries";
      error_line = 0;
    } else {
      kept = static_cast<PlanEntry*>(memory);
      size_t n = 0;
      for_each_line(text, size, [&](std::string_view line) {
        plan::Line parsed = plan::parse_line(line);
        if (parsed.kind != plan::LineKind::entry) return true;
        PlanEntry& e = kept[n++];
        signature_bytes(parsed.unit.data(), parsed.unit.size(), e.unit);
        SchemeId id{};
        find_scheme_id(parsed.scheme, id);
        e.scheme = static_cast<uint32_t>(id);
        e.site = parsed.site;
        e.weight = weight_of_probability(parsed.probability);
        return true;
      });
      sort_entries(kept, entries);
      for (size_t i = 1; i < entries && error == nullptr; ++i)
        if (compare(kept[i - 1], kept[i]) == 0) error = "the same unit, scheme and site twice";
      if (error != nullptr) {
        // Which line: the second occurrence in the file's order.
        const PlanEntry* twice = nullptr;
        for (size_t i = 1; i < entries && !twice; ++i)
          if (compare(kept[i - 1], kept[i]) == 0) twice = &kept[i];
        uint32_t number = 0, seen = 0;
        error_line = 0;
        for_each_line(text, size, [&](std::string_view line) {
          ++number;
          plan::Line parsed = plan::parse_line(line);
          if (parsed.kind != plan::LineKind::entry) return true;
          PlanEntry e{};
          signature_bytes(parsed.unit.data(), parsed.unit.size(), e.unit);
          SchemeId id{};
          find_scheme_id(parsed.scheme, id);
          e.scheme = static_cast<uint32_t>(id);
          e.site = parsed.site;
          if (compare(e, *twice) == 0 && ++seen == 2) {
            error_line = number;
            return false;
          }
          return true;
        });
        munmap(kept, entries * sizeof(PlanEntry));
        kept = nullptr;
      }
    }
  }
  if (mapping != MAP_FAILED) munmap(mapping, size);
  if (error != nullptr) {
    g_plan_identity.id[0] = '\0';
    refuse(name, error_line, error);
    return false;
  }
  g_plan.entries = kept;
  g_plan.entry_count = entries;
  g_plan.uniform_weight = sparsity_text != nullptr ? weight_of_probability(1.0 / sparsity) : 0;
  if (sparsity_text != nullptr) {
    size_t n = strlen(sparsity_text);
    if (n >= sizeof g_plan_identity.sparsity) n = sizeof g_plan_identity.sparsity - 1;
    memcpy(g_plan_identity.sparsity, sparsity_text, n);
  }
  g_plan_identity.in_force = true;
  if (verbose) {
    char count[24] = {};
    format_decimal(entries, count, sizeof count - 1);
    const char* parts[] = {"sampling plan '", g_plan_identity.id, "' from ", name, ": ", count,
                           sparsity_text != nullptr
                               ? " sites named, the others at the uniform rate"
                               : " sites named, the others never sampled (SAMPLER_SPARSITY is not set)"};
    print_line(parts, sizeof parts / sizeof parts[0]);
  }
  return true;
}

bool plan_in_force() { return g_plan_identity.in_force; }

void compute_thresholds(sampler_unit& unit) {
  if (unit.thresholds == nullptr) return;
  uint32_t i = 0;
  if (unit.abi_version >= 4 && unit.threshold_bounds != nullptr) {
    const uint32_t* words = unit.threshold_bounds;
    uint64_t size = unit.threshold_bounds_size, at = 0;
    for (; i < unit.threshold_count && at + 3 <= size; ++i) {
      uint64_t n = words[at], multiplier = words[at + 1] | uint64_t{words[at + 2]} << 32;
      if (at + 3 + 2 * n > size) break;
      const uint32_t* pairs = words + at + 3;
      at += 3 + 2 * n;
      uint64_t sum = 0;
      bool known = true;
      for (uint64_t e = 0; e < n && known; ++e) {
        known = pairs[2 * e] < unit.weight_count;
        if (known)
          sum = add_saturated(sum, multiply_saturated(static_cast<uint64_t>(load_relaxed(&unit.weights[pairs[2 * e]])),
                                                      pairs[2 * e + 1]));
      }
      if (!known) break;
      uint64_t threshold = multiplier == UINT64_MAX ? static_cast<uint64_t>(kCertainWeight)
                                                    : multiply_saturated(sum, multiplier);
      store_relaxed(&unit.thresholds[i], static_cast<int64_t>(threshold));
    }
  }
  for (; i < unit.threshold_count; ++i) store_relaxed(&unit.thresholds[i], kCertainWeight);
}


void apply_plan(sampler_unit& unit) {
  if (!g_plan_identity.in_force || unit.abi_version < 3 || unit.weights == nullptr) return;
  uint64_t sites = 0;
  for (uint32_t i = 0; i < unit.scheme_count; ++i) sites += unit.schemes[i].site_count;
  if (sites != unit.weight_count) {
    say("unit ", unit.signature, ": its weights do not match its sites; its sites keep weight 1 under the plan");
    return;
  }
  for (uint64_t i = 0; i < sites; ++i) store_relaxed(&unit.weights[i], g_plan.uniform_weight);
  // The plan's entries for this unit: a range of the sorted entries.
  PlanEntry key{};
  signature_bytes(unit.signature, 32, key.unit);
  size_t low = 0, high = g_plan.entry_count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (memcmp(g_plan.entries[middle].unit, key.unit, sizeof key.unit) < 0)
      low = middle + 1;
    else
      high = middle;
  }
  uint64_t base = 0;
  for (uint32_t i = 0; i < unit.scheme_count; ++i) {
    const sampler_scheme& scheme = unit.schemes[i];
    SchemeId id{};
    bool known = find_scheme_id(scheme.name, id);
    for (size_t e = low; known && e < g_plan.entry_count; ++e) {
      const PlanEntry& entry = g_plan.entries[e];
      if (memcmp(entry.unit, key.unit, sizeof key.unit) != 0) break;
      if (entry.scheme == static_cast<uint32_t>(id) && entry.site < scheme.site_count)
        store_relaxed(&unit.weights[base + entry.site], entry.weight);
    }
    base += scheme.site_count;
  }
  compute_thresholds(unit);
  if (unit.abi_version >= 4) store_relaxed(&unit.planned, uint32_t{1});
}

}  // namespace sampler::runtime
