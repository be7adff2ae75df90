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

/// One entry, its key in three integers so that sorting and searching compare words, not bytes.
struct PlanEntry {
  uint64_t unit_high, unit_low;  ///< the unit signature's 32 hex digits, the first 16 and the last 16
  uint64_t scheme_site;          ///< the scheme's index in the scheme table (sections/scheme_table.h) << 32 | site
  int64_t weight;
};

struct Plan {
  int64_t uniform_weight = 0;  ///< of the sites the plan does not name
  PlanEntry* entries = nullptr;  ///< sorted by (unit, scheme, site)
  size_t entry_count = 0;
};
Plan g_plan;

/// 16 lower-case hex digits (checked by the codec, or a registered unit's) as a number.
uint64_t hex_word(const char* text) {
  uint64_t word = 0;
  for (int i = 0; i < 16; ++i)
    word = word << 4 | static_cast<uint64_t>(text[i] <= '9' ? text[i] - '0' : text[i] - 'a' + 10);
  return word;
}

/// An entry's key: its unit (32 hex digits), scheme and site. Consecutive entries mostly name the same unit and
/// scheme (sampler-analyze writes them so): `previous` keeps the last conversion.
struct KeyReader {
  const char* unit_text = nullptr;
  uint64_t unit_high = 0, unit_low = 0;
  std::string_view scheme_text;
  uint32_t scheme = 0;

  void read(const plan::Line& line, PlanEntry& e) {
    if (unit_text == nullptr || memcmp(unit_text, line.unit.data(), 32) != 0) {
      unit_text = line.unit.data();
      unit_high = hex_word(unit_text);
      unit_low = hex_word(unit_text + 16);
    }
    if (scheme_text.data() == nullptr || scheme_text.size() != line.scheme.size() ||
        memcmp(scheme_text.data(), line.scheme.data(), line.scheme.size()) != 0) {
      scheme_text = line.scheme;
      SchemeId id{};
      find_scheme_id(line.scheme, id);
      scheme = static_cast<uint32_t>(id);
    }
    e.unit_high = unit_high;
    e.unit_low = unit_low;
    e.scheme_site = uint64_t{scheme} << 32 | line.site;
  }
};

int compare(const PlanEntry& a, const PlanEntry& b) {
  if (a.unit_high != b.unit_high) return a.unit_high < b.unit_high ? -1 : 1;
  if (a.unit_low != b.unit_low) return a.unit_low < b.unit_low ? -1 : 1;
  if (a.scheme_site != b.scheme_site) return a.scheme_site < b.scheme_site ? -1 : 1;
  return 0;
}

/// Heapsort: in place, no allocation, n log n whatever the order. `less(a, b)`: a before b.
template <typename T, typename Less>
void heapsort(T* e, size_t n, Less&& less) {
  auto sift = [e, &less](size_t root, size_t end) {
    while (2 * root + 1 < end) {
      size_t child = 2 * root + 1;
      if (child + 1 < end && less(e[child], e[child + 1])) ++child;
      if (!less(e[root], e[child])) return;
      T t = e[root];
      e[root] = e[child];
      e[child] = t;
      root = child;
    }
  };
  for (size_t i = n / 2; i-- > 0;) sift(i, n);
  for (size_t end = n; end > 1; --end) {
    T t = e[0];
    e[0] = e[end - 1];
    e[end - 1] = t;
    sift(0, end - 1);
  }
}

void* map_memory(size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

/// A stretch of one unit's entries already in order.
struct Run {
  size_t start, count;
};

/// Whether `next` starts a run after `previous`: another unit, or the order broken.
bool starts_run(const PlanEntry& previous, const PlanEntry& next) {
  return previous.unit_high != next.unit_high || previous.unit_low != next.unit_low ||
         previous.scheme_site > next.scheme_site;
}

/// Runs in order whose ranges do not overlap, put in order as blocks: the runs sorted by their first entry, then
/// copied into memory of `capacity` entries, which replaces `e`'s. False (`e` unchanged) when the runs overlap or
/// there is no memory.
bool order_runs(PlanEntry*& e, size_t n, size_t runs, size_t capacity) {
  Run* run = static_cast<Run*>(map_memory(runs * sizeof(Run)));
  if (run == nullptr) return false;
  size_t count = 0;
  run[count++] = Run{0, 1};
  for (size_t i = 1; i < n; ++i)
    if (starts_run(e[i - 1], e[i]))
      run[count++] = Run{i, 1};
    else
      ++run[count - 1].count;
  heapsort(run, count, [e](const Run& a, const Run& b) { return compare(e[a.start], e[b.start]) < 0; });
  bool disjoint = true;  // equal ends are allowed: the same key twice, which the caller refuses
  for (size_t r = 1; r < count && disjoint; ++r)
    disjoint = compare(e[run[r - 1].start + run[r - 1].count - 1], e[run[r].start]) <= 0;
  PlanEntry* ordered = disjoint ? static_cast<PlanEntry*>(map_memory(capacity * sizeof(PlanEntry))) : nullptr;
  if (ordered != nullptr) {
    size_t at = 0;
    for (size_t r = 0; r < count; ++r) {
      memcpy(ordered + at, e + run[r].start, run[r].count * sizeof(PlanEntry));
      at += run[r].count;
    }
    munmap(e, capacity * sizeof(PlanEntry));
    e = ordered;
  }
  munmap(run, runs * sizeof(Run));
  return ordered != nullptr;
}

/// The entries' order, in memory of `capacity` entries (which `e` may come to point to instead). sampler-analyze
/// writes each unit's entries in order, the units in the order of the program's site files: one run a unit, put
/// in order as blocks in n + r log r (r runs); anything else (a unit in two runs) is heapsorted in place.
void order_entries(PlanEntry*& e, size_t n, size_t capacity) {
  size_t runs = 1, unordered = 0;
  for (size_t i = 1; i < n; ++i) {
    runs += starts_run(e[i - 1], e[i]);
    unordered += compare(e[i - 1], e[i]) > 0;
  }
  if (unordered == 0 || order_runs(e, n, runs, capacity)) return;
  heapsort(e, n, [](const PlanEntry& a, const PlanEntry& b) { return compare(a, b) < 0; });
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

  // One pass: every line checked, the id kept, the entries with their weights into memory of their own, enough
  // for the most entries the file's size can hold (an entry's line has at least 38 bytes).
  plan::Reader reader;
  const char* error = nullptr;
  uint32_t error_line = 0;
  PlanEntry* kept = nullptr;
  size_t capacity = size / 38 + 1, entries = 0;
  KeyReader keys;
  for_each_line(text, size, [&](std::string_view line) {
    plan::Line parsed = reader.next(line);
    if (parsed.kind == plan::LineKind::malformed) {
      error = parsed.error;
      error_line = reader.line_number();
      return false;
    }
    if (parsed.kind == plan::LineKind::id) {
      memcpy(g_plan_identity.id, parsed.id.data(), parsed.id.size());
      g_plan_identity.id[parsed.id.size()] = '\0';
    }
    if (parsed.kind != plan::LineKind::entry) return true;
    if (kept == nullptr) {
      void* memory = mmap(nullptr, capacity * sizeof(PlanEntry), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                          -1, 0);
      if (memory == MAP_FAILED) {
        error = "no memory for its entries";
        return false;
      }
      kept = static_cast<PlanEntry*>(memory);
    }
    if (entries == capacity) {  // cannot happen: the codec's entries are never that short
      error = "more entries than its size can hold";
      error_line = reader.line_number();
      return false;
    }
    PlanEntry& e = kept[entries++];
    keys.read(parsed, e);
    e.weight = weight_of_probability(parsed.probability);
    return true;
  });
  if (error == nullptr) {
    error = reader.finish();
    error_line = error != nullptr && reader.line_number() == 0 ? 1 : reader.line_number();
  }
  if (error == nullptr && entries > 0) {
    order_entries(kept, entries, capacity);
    const PlanEntry* twice = nullptr;
    for (size_t i = 1; i < entries && twice == nullptr; ++i)
      if (compare(kept[i - 1], kept[i]) == 0) twice = &kept[i];
    if (twice != nullptr) {
      // Which line: the second occurrence in the file's order.
      error = "the same unit, scheme and site twice";
      uint32_t number = 0, seen = 0;
      error_line = 0;
      KeyReader again;
      for_each_line(text, size, [&](std::string_view line) {
        ++number;
        plan::Line parsed = plan::parse_line(line);
        if (parsed.kind != plan::LineKind::entry) return true;
        PlanEntry e{};
        again.read(parsed, e);
        if (compare(e, *twice) == 0 && ++seen == 2) {
          error_line = number;
          return false;
        }
        return true;
      });
    }
  }
  if (error != nullptr && kept != nullptr) {
    munmap(kept, capacity * sizeof(PlanEntry));
    kept = nullptr;
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

namespace {

/// Calls on_entry(index, multiplier, pairs, n) for each entry of the unit's threshold bounds, in order, while they
/// are well formed and on_entry returns true; returns the number of entries it walked.
template <typename OnEntry>
uint32_t for_each_bound(const sampler_unit& unit, OnEntry&& on_entry) {
  const uint32_t* words = unit.threshold_bounds;
  uint64_t size = unit.threshold_bounds_size, at = 0;
  uint32_t i = 0;
  for (; i < unit.threshold_count && at + 3 <= size; ++i) {
    uint64_t n = words[at], multiplier = words[at + 1] | uint64_t{words[at + 2]} << 32;
    if (at + 3 + 2 * n > size) break;
    const uint32_t* pairs = words + at + 3;
    at += 3 + 2 * n;
    if (!on_entry(i, multiplier, pairs, n)) break;
  }
  return i;
}

constexpr int64_t kDispatchOn = int64_t{1} << 61;   // the twin when sampling is off (abi.h)
constexpr int64_t kDispatchOff = INT64_MIN;         // the twin always
// Off until a callee says otherwise (settle_dispatches()): on for a thread that runs the function meanwhile, so
// that no function is ever off by mistake, even for a moment.
constexpr int64_t kDispatchMaybeOff = kDispatchOn + 1;

/// A dispatch's entry before its callees are looked at: maybe off if every site of the function weighs 0, on if
/// one does not or cannot be named.
int64_t dispatch_of_sites(const sampler_unit& unit, const uint32_t* pairs, uint64_t n) {
  for (uint64_t e = 0; e < n; ++e) {
    uint64_t first = pairs[2 * e], times = pairs[2 * e + 1];
    if (times == SAMPLER_THRESHOLD_CALLEE) {
      if (first >= unit.threshold_count) return kDispatchOn;
      continue;
    }
    uint64_t run = times & SAMPLER_THRESHOLD_RUN ? times & ~uint64_t{SAMPLER_THRESHOLD_RUN} : 1;
    if (first + run > unit.weight_count) return kDispatchOn;
    for (uint64_t r = 0; r < run; ++r)
      if (load_relaxed(&unit.weights[first + r]) != 0) return kDispatchOn;
  }
  return kDispatchMaybeOff;
}

/// The plan's off functions: the greatest set of dispatches whose sites all weigh 0 (dispatch_of_sites()) and
/// whose callees are all in it. Each pass turns on the functions with a callee on, until none changes (at most
/// one pass a dispatch, and one when callees come before their callers, as C defines them). Then those left are
/// off, and after them the entries of SAMPLER_THRESHOLD_BELOW_UNSAMPLED that name them (in that order: a B below
/// every countdown sends the dispatch on to its own test). `walked`: the entries computed.
void settle_dispatches(sampler_unit& unit, uint32_t walked) {
  auto maybe_off = [&unit, walked](uint64_t entry) {
    return entry < walked && load_relaxed(&unit.thresholds[entry]) == kDispatchMaybeOff;
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for_each_bound(unit, [&](uint32_t i, uint64_t multiplier, const uint32_t* pairs, uint64_t n) {
      if (i >= walked) return false;
      if (multiplier != SAMPLER_THRESHOLD_DISPATCH || !maybe_off(i)) return true;
      for (uint64_t e = 0; e < n; ++e)
        if (pairs[2 * e + 1] == SAMPLER_THRESHOLD_CALLEE && !maybe_off(pairs[2 * e])) {
          store_relaxed(&unit.thresholds[i], kDispatchOn);
          changed = true;
          break;
        }
      return true;
    });
  }
  for_each_bound(unit, [&](uint32_t i, uint64_t multiplier, const uint32_t*, uint64_t) {
    if (i >= walked) return false;
    if (multiplier == SAMPLER_THRESHOLD_DISPATCH && maybe_off(i)) store_relaxed(&unit.thresholds[i], kDispatchOff);
    return true;
  });
  for_each_bound(unit, [&](uint32_t i, uint64_t multiplier, const uint32_t* pairs, uint64_t n) {
    if (i >= walked) return false;
    if (multiplier == SAMPLER_THRESHOLD_BELOW_UNSAMPLED && n == 1 && pairs[1] == SAMPLER_THRESHOLD_CALLEE &&
        pairs[0] < walked && load_relaxed(&unit.thresholds[pairs[0]]) == kDispatchOff)
      store_relaxed(&unit.thresholds[i], kDispatchOff);
    return true;
  });
}

}  // namespace

void compute_thresholds(sampler_unit& unit) {
  constexpr uint64_t kRun = SAMPLER_THRESHOLD_RUN;
  if (unit.thresholds == nullptr) return;
  uint32_t i = 0;
  if (unit.abi_version >= 4 && unit.threshold_bounds != nullptr) {
    i = for_each_bound(unit, [&unit](uint32_t slot, uint64_t multiplier, const uint32_t* pairs, uint64_t n) {
      if (multiplier == SAMPLER_THRESHOLD_DISPATCH && unit.abi_version >= 6) {
        store_relaxed(&unit.thresholds[slot], dispatch_of_sites(unit, pairs, n));
        return true;
      }
      uint64_t sum = 0;
      bool known = true;
      for (uint64_t e = 0; e < n && known; ++e) {
        uint64_t site = pairs[2 * e], times = pairs[2 * e + 1], run = 1;
        if (times & kRun) {  // a run of sites, once each
          run = times & ~kRun;
          times = 1;
        }
        known = site + run <= unit.weight_count;
        for (uint64_t r = 0; known && r < run; ++r) {
          uint64_t weight = static_cast<uint64_t>(load_relaxed(&unit.weights[site + r]));
          sum = add_saturated(sum, multiply_saturated(weight, times));
        }
      }
      // A counted copy's B names its dispatch with a pair that is no site (settle_dispatches())
      if (multiplier == SAMPLER_THRESHOLD_BELOW_UNSAMPLED) known = true;
      if (!known) return false;
      uint64_t threshold = 0;
      if (multiplier == UINT64_MAX) {
        threshold = static_cast<uint64_t>(kCertainWeight);
      } else if (multiplier == SAMPLER_THRESHOLD_BELOW_UNSAMPLED) {  // a counted copy's B (abi.h)
        threshold = (uint64_t{1} << 61) - 1;
      } else if (multiplier & SAMPLER_THRESHOLD_SHIFT) {  // a loop's copy does not run under a plan (abi.h)
        threshold = 63;
      } else {
        threshold = multiply_saturated(sum, multiplier);
      }
      store_relaxed(&unit.thresholds[slot], static_cast<int64_t>(threshold));
      return true;
    });
    if (unit.abi_version >= 6) settle_dispatches(unit, i);
  }
  // Past a malformed bound the entry may be a threshold or a loop's shift: 2^62 + 63 is safe as both (no countdown
  // passes it; the shift instruction takes its low 6 bits, 63). A unit of version 3 expects 2^62 exactly.
  int64_t unknown = unit.abi_version >= 4 ? kCertainWeight + 63 : kCertainWeight;
  for (; i < unit.threshold_count; ++i) store_relaxed(&unit.thresholds[i], unknown);
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
  // The plan's entries for this unit: a range of the sorted entries, walked once; each names its scheme by its
  // index in the scheme table, which leads to the scheme's first weight in the unit.
  PlanEntry key{hex_word(unit.signature), hex_word(unit.signature + 16), 0, 0};
  size_t low = 0, high = g_plan.entry_count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (compare(g_plan.entries[middle], key) < 0)
      low = middle + 1;
    else
      high = middle;
  }
  uint64_t first_weight[kSchemeCount];  // UINT64_MAX: a scheme the unit does not have
  uint32_t site_count[kSchemeCount] = {};
  for (uint64_t& first : first_weight) first = UINT64_MAX;
  uint64_t base = 0;
  for (uint32_t i = 0; i < unit.scheme_count; ++i) {
    SchemeId id{};
    if (find_scheme_id(unit.schemes[i].name, id) && first_weight[static_cast<size_t>(id)] == UINT64_MAX) {
      first_weight[static_cast<size_t>(id)] = base;
      site_count[static_cast<size_t>(id)] = unit.schemes[i].site_count;
    }
    base += unit.schemes[i].site_count;
  }
  for (size_t e = low; e < g_plan.entry_count; ++e) {
    const PlanEntry& entry = g_plan.entries[e];
    if (entry.unit_high != key.unit_high || entry.unit_low != key.unit_low) break;
    uint64_t scheme = entry.scheme_site >> 32;
    uint32_t site = static_cast<uint32_t>(entry.scheme_site);
    if (scheme < kSchemeCount && first_weight[scheme] != UINT64_MAX && site < site_count[scheme])
      store_relaxed(&unit.weights[first_weight[scheme] + site], entry.weight);
  }
  compute_thresholds(unit);
  if (unit.abi_version >= 4) store_relaxed(&unit.planned, uint32_t{1});
}

}  // namespace sampler::runtime
