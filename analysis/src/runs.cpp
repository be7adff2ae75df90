// Reading runs in parallel (analysis/runs.h).
#include "analysis/runs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "analysis/crash_signature.h"
#include "analysis/run_summary.h"
#include "samples_line.h"
#include "sections/line_reader.h"
#include "sections/lines.h"
#include "sections/report.h"
#include "sections/site_info.h"

namespace sampler::analysis {

namespace fs = std::filesystem;

void RunSet::add(std::string name, bool failing, bool crash, int32_t group, std::span<const uint32_t> sites,
                 std::span<const uint32_t> predicates) {
  names.push_back(std::move(name));
  failed.push_back(failing ? 1 : 0);
  crashed.push_back(crash ? 1 : 0);
  crash_group.push_back(group);
  id_list::encode(sites, site_data);
  site_offsets.push_back(site_data.size());
  id_list::encode(predicates, predicate_data);
  predicate_offsets.push_back(predicate_data.size());
}

void RunSet::add_from(const RunSet& other, size_t run, int32_t group) {
  names.push_back(other.names[run]);
  failed.push_back(other.failed[run]);
  crashed.push_back(other.crashed[run]);
  crash_group.push_back(group);
  site_data.insert(site_data.end(), other.site_data.begin() + static_cast<ptrdiff_t>(other.site_offsets[run]),
                   other.site_data.begin() + static_cast<ptrdiff_t>(other.site_offsets[run + 1]));
  site_offsets.push_back(site_data.size());
  predicate_data.insert(predicate_data.end(),
                        other.predicate_data.begin() + static_cast<ptrdiff_t>(other.predicate_offsets[run]),
                        other.predicate_data.begin() + static_cast<ptrdiff_t>(other.predicate_offsets[run + 1]));
  predicate_offsets.push_back(predicate_data.size());
}

std::vector<uint32_t> RunSet::sites(size_t run) const {
  std::vector<uint32_t> ids;
  for_each_site(run, [&](uint32_t id) { ids.push_back(id); });
  return ids;
}

std::vector<uint32_t> RunSet::predicates(size_t run) const {
  std::vector<uint32_t> ids;
  for_each_predicate(run, [&](uint32_t id) { ids.push_back(id); });
  return ids;
}

namespace {

// ------------------------------------------------------------------------------------------------ diagnostics

// The caller's sink, one report at a time from any thread.
class LockedSink : public DiagnosticSink {
 public:
  explicit LockedSink(DiagnosticSink& sink) : sink_(sink) {}
  void report(const Diagnostic& diagnostic) override {
    std::lock_guard lock(mutex_);
    if (diagnostic.severity == Severity::kError) errors_ = true;
    sink_.report(diagnostic);
  }
  bool errors() const { return errors_; }

 private:
  DiagnosticSink& sink_;
  std::mutex mutex_;
  std::atomic<bool> errors_ = false;
};

// ------------------------------------------------------------------------------------------------ the catalogue

// One sites section as the reading threads use it.
struct SectionEntry {
  uint32_t first_site = 0;
  uint32_t site_count = 0;
  uint32_t counters = 0;
  uint32_t first_predicate = 0;  // site i's first predicate: first_predicate + i * per_site
  uint32_t per_site = 0;
  SchemeKind kind = SchemeKind::kPerCounter;
};

// true_predicates() of the six relations, by the three counters' non-zero bits.
constexpr std::array<uint32_t, 8> kSixRelations = [] {
  std::array<uint32_t, 8> table{};
  for (uint32_t bits = 0; bits < 8; ++bits) table[bits] = true_predicates(SchemeKind::kSixRelations, bits);
  return table;
}();

// Assigns site and predicate ids to sites sections as the threads meet them (under a lock; each thread caches).
class Registry {
 public:
  explicit Registry(Catalogue& catalogue) : catalogue_(catalogue) {}

  // The entry of `sites`; `counters` is the first samples line's count (for schemes docs/formats.md does not name).
  SectionEntry enter(const IndexedSites& sites, uint32_t counters) {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(&sites);
    if (found != entries_.end()) return found->second;
    SectionEntry entry;
    entry.kind = scheme_kind(sites.scheme);
    const SchemeInfo* info = find_scheme(sites.scheme);
    entry.counters = info != nullptr ? static_cast<uint32_t>(info->counters) : counters;
    entry.first_site = static_cast<uint32_t>(catalogue_.sites.size());
    entry.site_count = static_cast<uint32_t>(sites.site_count);
    uint32_t predicates = predicate_count(entry.kind, entry.counters);
    entry.first_predicate = static_cast<uint32_t>(catalogue_.predicate_site.size());
    entry.per_site = predicates;
    std::string_view body = sites.body;
    while (!body.empty()) {
      std::string_view line = text::take_line(body);
      Site site;
      site.sites_file = sites.label;
      site.unit = sites.unit;
      site.scheme = sites.scheme;
      site.kind = entry.kind;
      site.counters = entry.counters;
      site.first_predicate = static_cast<uint32_t>(catalogue_.predicate_site.size());
      site.predicates = predicates;
      parse_site_fields(line, site);
      for (uint32_t p = 0; p < predicates; ++p) {
        catalogue_.predicate_site.push_back(static_cast<uint32_t>(catalogue_.sites.size()));
      }
      catalogue_.sites.push_back(std::move(site));
    }
    entries_.emplace(&sites, entry);
    entered_.push_back(&sites);
    return entry;
  }

  // True the first time a key is reported missing (one error per key over all reports).
  bool first_missing(std::string_view unit, std::string_view scheme) {
    std::lock_guard lock(mutex_);
    auto [it, added] = missing_.emplace(std::string(unit), std::string(scheme));
    if (added) missing_order_.push_back(it);
    return added;
  }

  // How many sections were entered and keys reported missing; forget() goes back to such a point (the catalogue
  // is cut back by its caller).
  std::pair<size_t, size_t> sizes() const { return {entered_.size(), missing_order_.size()}; }
  void forget(std::pair<size_t, size_t> sizes) {
    for (size_t i = sizes.first; i < entered_.size(); ++i) entries_.erase(entered_[i]);
    entered_.resize(std::min(sizes.first, entered_.size()));
    for (size_t i = sizes.second; i < missing_order_.size(); ++i) missing_.erase(missing_order_[i]);
    missing_order_.resize(std::min(sizes.second, missing_order_.size()));
  }

 private:
  Catalogue& catalogue_;
  std::mutex mutex_;
  std::unordered_map<const IndexedSites*, SectionEntry> entries_;
  std::vector<const IndexedSites*> entered_;  // entries_' keys in the order they were entered
  std::set<std::pair<std::string, std::string>> missing_;
  std::vector<std::set<std::pair<std::string, std::string>>::iterator> missing_order_;  // in the order named
};

// ------------------------------------------------------------------------------------------------ one report

// What one reading thread keeps: its runs, with the index of their file, until the threads are joined.
struct LocalRuns {
  RunSet runs;
  std::vector<size_t> file_index;
  std::vector<std::string> crash_keys;  // per run: its signature ("" if none)
  uint64_t left_out = 0;
  uint64_t bytes = 0;
  std::vector<char> buffer;  // the report being read, when it is read whole
};

// A reading thread's copy of the registry entries it used: the registry's lock is taken once per section kind
// and thread, not once per section of every report.
using EntryCache = std::unordered_map<const IndexedSites*, SectionEntry>;

// One report's observed sites and true predicates, as bitsets over the catalogue's ids (bit i of word w: id
// 64 w + i), and the word ranges that may hold set bits: each run's lists are encoded from these (id_list.h's
// encode_bits), without listing the ids first, and only these words are cleared for the next report.
struct RunBits {
  std::vector<uint64_t> words;
  std::vector<id_list::WordRange> ranges;

  // ORs `bits` bits of `source` (bit 0: id `first`) into the bitset.
  void add(uint64_t first, const uint64_t* source, uint64_t bits) {
    if (bits == 0) return;
    size_t begin = static_cast<size_t>(first >> 6), end = static_cast<size_t>((first + bits + 63) >> 6);
    if (words.size() < end + 1) words.resize(end + 1, 0);
    ranges.push_back({begin, end});
    const unsigned shift = static_cast<unsigned>(first & 63);
    const size_t count = static_cast<size_t>((bits + 63) >> 6);
    for (size_t i = 0; i < count; ++i) {
      uint64_t value = source[i];
      if (i + 1 == count && (bits & 63) != 0) value &= (uint64_t{1} << (bits & 63)) - 1;
      words[begin + i] |= value << shift;
      if (shift != 0) words[begin + i + 1] |= value >> (64 - shift);
    }
  }

  // Appends the encoded list to `out` and clears the bitset for the next report.
  void encode_and_clear(std::vector<uint8_t>& out) {
    // Sections in the usual order give increasing ranges; others (or a section twice) are sorted and merged.
    if (!std::is_sorted(ranges.begin(), ranges.end(),
                        [](const auto& a, const auto& b) { return a.begin < b.begin; })) {
      std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
    }
    size_t merged = 0;
    for (const id_list::WordRange& range : ranges) {
      if (merged > 0 && range.begin <= ranges[merged - 1].end) {
        ranges[merged - 1].end = std::max(ranges[merged - 1].end, range.end);
      } else {
        ranges[merged++] = range;
      }
    }
    ranges.resize(merged);
    id_list::encode_bits(words, ranges, out);
    clear();
  }

  void clear() {
    for (const id_list::WordRange& range : ranges) {
      std::fill(words.begin() + static_cast<ptrdiff_t>(range.begin), words.begin() + static_cast<ptrdiff_t>(range.end),
                0);
    }
    ranges.clear();
  }
};

// Bits written one field at a time, in increasing positions, into words: the current word and the next stay in
// registers (a field of up to 32 bits may straddle them) and each word is stored once, when the positions leave
// it (a store per id into the same word would wait on the last one).
struct BitWriter {
  uint64_t* words = nullptr;
  size_t word = 0;        // the index of `low`
  uint64_t low = 0, high = 0;

  // ORs `value` (at most 32 bits) in at bit `position` (not below the last call's word).
  void put(uint64_t position, uint32_t value) {
    size_t at = static_cast<size_t>(position >> 6);
    while (word != at) {  // 0 or 1 rounds, except after lines that were left out
      words[word++] = low;
      low = high;
      high = 0;
    }
    unsigned shift = static_cast<unsigned>(position & 63);
    low |= uint64_t{value} << shift;
    high |= (uint64_t{value} >> 1) >> (63 - shift);  // the bits past the word (none when shift is 0)
  }
  // Stores what is left (the words must have room for `word` + 1).
  void flush() {
    words[word] = low;
    words[word + 1] = high;
  }
};

// The samples sections of one report's samples subreport: counters -> observed sites and true predicates.
class SamplesCollector : public SamplesVisitor {
 public:
  SamplesCollector(const SitesIndex& sites, Registry& registry, EntryCache& cache, RunBits& observed,
                   RunBits& predicates)
      : sites_(sites), registry_(registry), cache_(cache), observed_(observed), predicates_(predicates) {}

  /// Starts a new report (named `name` in diagnostics, which go to `sink`).
  void reset(const std::string& name, DiagnosticSink& sink) {
    finish();
    name_ = &name;
    sink_ = &sink;
  }

  void begin_section(const SampleSectionHeader& header) override {
    finish();  // the reader ends every section; this keeps the bitsets right even if it did not
    if (header.kind != SampleSectionKind::kSamples) return;
    const IndexedSites* found = sites_.find(header.unit, header.scheme);
    if (found == nullptr) {
      if (registry_.first_missing(header.unit, header.scheme)) {
        sink_->error(*name_, header.line, "no site information for unit " + std::string(header.unit) +
                                            ", scheme '" + std::string(header.scheme) + "'");
      }
      return;
    }
    if (found->conflicting || scheme_kind(found->scheme) == SchemeKind::kBounds) return;
    active_ = true;
    sites_entry_ = found;
    auto cached = cache_.find(found);
    have_entry_ = cached != cache_.end();
    if (have_entry_) {
      entry_ = cached->second;
      make_room();
    }
    section_line_ = header.line;
    lines_ = 0;
    bad_ = false;
  }

  void section_lines(std::string_view lines, uint64_t first_line_number) override {
    if (active_) take_lines(lines, first_line_number);
  }

  void section_line(std::string_view line, uint64_t line_number) override {
    if (active_) take_lines(line, line_number);
  }

  /// Ends a section still open (its bits are kept as end_section(false) would).
  void finish() {
    if (active_) end_section(false);
  }

  void end_section(bool complete) override {
    if (!active_) return;
    active_ = false;
    // docs/tools.md: a line count that differs from the sites' is an error and the section is left out; a
    // section cut short by the end of the input keeps what it has.
    if (lines_ > sites_entry_->site_count || (complete && lines_ != sites_entry_->site_count) || bad_) {
      if (!bad_) {
        sink_->error(*name_, section_line_,
                    "unit " + sites_entry_->unit + ", scheme '" + sites_entry_->scheme + "': " +
                        std::to_string(lines_) + " samples lines, but " + std::to_string(sites_entry_->site_count) +
                        " sites in '" + sites_entry_->label + "':" + std::to_string(sites_entry_->line));
      }
      return;
    }
    if (!have_entry_) return;  // no line was read
    site_writer_.flush();
    predicate_writer_.flush();
    observed_.add(entry_.first_site, section_sites_.data(), entry_.site_count);
    predicates_.add(entry_.first_predicate, section_predicates_.data(),
                    static_cast<uint64_t>(entry_.site_count) * entry_.per_site);
  }

  /// A samples section of a run's summary (analysis/run_summary.h): matched, checked and kept as end_section()
  /// keeps a report's, with the same diagnostics.
  void add_summary_section(const SummarySection& section) {
    const IndexedSites* found = sites_.find(section.unit, section.scheme);
    if (found == nullptr) {
      if (registry_.first_missing(section.unit, section.scheme)) {
        sink_->error(*name_, section.line, "no site information for unit " + std::string(section.unit) +
                                             ", scheme '" + std::string(section.scheme) + "'");
      }
      return;
    }
    if (found->conflicting || scheme_kind(found->scheme) == SchemeKind::kBounds) return;
    // A malformed line past the sites' count is not judged: the count is the error then.
    if (section.malformed && section.malformed_index < found->site_count) {
      sink_->error(*name_, section.malformed_line,
                   "malformed samples line for scheme '" + found->scheme + "': the section is left out");
      return;
    }
    if (section.lines > found->site_count || (section.complete && section.lines != found->site_count)) {
      sink_->error(*name_, section.line,
                   "unit " + found->unit + ", scheme '" + found->scheme + "': " + std::to_string(section.lines) +
                       " samples lines, but " + std::to_string(found->site_count) + " sites in '" + found->label +
                       "':" + std::to_string(found->line));
      return;
    }
    if (section.counters == 0) return;  // no line was read
    auto cached = cache_.find(found);
    if (cached == cache_.end()) cached = cache_.emplace(found, registry_.enter(*found, section.counters)).first;
    const SectionEntry& entry = cached->second;
    if (entry.counters != section.counters) {  // another run's first line set the scheme's counters
      sink_->error(*name_, section.line + 1,
                   "malformed samples line for scheme '" + found->scheme + "': the section is left out");
      return;
    }
    auto add = [](const uint8_t* list, uint64_t bits, std::vector<uint64_t>& words, RunBits& into, uint64_t first) {
      words.assign(static_cast<size_t>((bits + 63) >> 6) + 1, 0);
      id_list::for_each_word(
          list, [&](uint64_t w, uint64_t value) { if (w < words.size()) words[w] |= value; },
          [&](uint32_t id) { if (id < bits) words[id >> 6] |= uint64_t{1} << (id & 63); });
      into.add(first, words.data(), bits);
    };
    add(section.sites, entry.site_count, section_sites_, observed_, entry.first_site);
    add(section.predicates, static_cast<uint64_t>(entry.site_count) * entry.per_site, section_predicates_,
        predicates_, entry.first_predicate);
  }

 private:
  // Whole lines, each ending in "\n" (the last one may not): the hot loop of reading. Only whether each counter
  // is zero matters: no number is converted, so none can overflow. Each line sets its site's bit and its true
  // predicates' bits in the section's bitsets, at positions that follow from the line's index alone.
  void take_lines(std::string_view lines, uint64_t number) {
    const char* p = lines.data();
    const char* end = p + lines.size();
    // Copies in registers: the stores into the bitsets could alias the members.
    BitWriter sites = site_writer_, predicates = predicate_writer_;
    uint64_t index = lines_;
    const uint64_t site_count = sites_entry_->site_count;
    // The column count - 1 a line must have to be recorded without more checks (none while the section has no
    // entry yet or was found bad).
    auto expected_column = [this] { return have_entry_ && !bad_ ? entry_.counters - 1 : UINT32_MAX; };
    uint32_t expected = expected_column();
    auto take = [&](uint32_t nonzero, uint32_t column, bool well_formed) __attribute__((always_inline)) {
      uint64_t line_number = number++;
      uint64_t line = index++;
      if (line >= site_count || !well_formed || column != expected) [[unlikely]] {
        if (bad_ || line >= site_count) return;
        site_writer_ = sites;
        predicate_writer_ = predicates;
        bool ok = check_line(column + 1, well_formed, line_number);
        sites = site_writer_;  // make_room() may have moved the bitsets
        predicates = predicate_writer_;
        expected = expected_column();
        if (!ok) return;
      }
      sites.put(line, nonzero != 0 ? 1u : 0u);
      const uint32_t truth =
          entry_.kind == SchemeKind::kSixRelations ? kSixRelations[nonzero & 7] : true_predicates(entry_.kind, nonzero);
      predicates.put(line * entry_.per_site, truth & predicate_mask_);
    };
    while (p < end) {
#if defined(__SSE2__)
      // Up to 64 bytes at a time: every line that ends in them, read from bit masks of the bytes.
      if (const char* next = samples_line::take_window(p, end, take); next != p) {
        p = next;
        continue;
      }
#endif
      // A line of 64 bytes or more, one that does not end, or no SSE2: a byte at a time.
      uint32_t nonzero = 0, column = 0;
      bool well_formed = true;
      p = samples_line::scan_line(p, end, nonzero, column, well_formed);
      take(nonzero, column, well_formed);
    }
    lines_ = index;
    site_writer_ = sites;
    predicate_writer_ = predicates;
  }

  // The first line of a section (its counters' count gives the entry of a scheme docs/formats.md does not name), or one
  // that does not fit: false (and the section is left out) if it is malformed.
  bool check_line(uint32_t counters, bool well_formed, uint64_t number) {
    if (!have_entry_ && well_formed) {
      entry_ = registry_.enter(*sites_entry_, counters);
      cache_.emplace(sites_entry_, entry_);
      have_entry_ = true;
      make_room();
    }
    if (!well_formed || counters != entry_.counters) {
      sink_->error(*name_, number, "malformed samples line for scheme '" + sites_entry_->scheme +
                                      "': the section is left out");
      bad_ = true;
      return false;
    }
    return true;
  }

  // Clears the section's bitsets (a bit per site, per_site bits per site for its predicates, and a word to spare
  // for BitWriter::flush()) and starts their writers.
  void make_room() {
    auto prepare = [](std::vector<uint64_t>& words, uint64_t bits, BitWriter& writer) {
      words.assign(static_cast<size_t>((bits + 63) >> 6) + 2, 0);
      writer = BitWriter{words.data()};
    };
    prepare(section_sites_, entry_.site_count, site_writer_);
    prepare(section_predicates_, static_cast<uint64_t>(entry_.site_count) * entry_.per_site, predicate_writer_);
    predicate_mask_ = entry_.per_site >= 32 ? ~0u : (1u << entry_.per_site) - 1;
  }

  const SitesIndex& sites_;
  Registry& registry_;
  EntryCache& cache_;
  DiagnosticSink* sink_ = nullptr;
  const std::string* name_ = nullptr;
  RunBits& observed_;
  RunBits& predicates_;
  bool active_ = false;
  const IndexedSites* sites_entry_ = nullptr;
  bool have_entry_ = false;
  SectionEntry entry_;
  uint64_t section_line_ = 0;
  uint64_t lines_ = 0;
  std::vector<uint64_t> section_sites_, section_predicates_;  // this section's bitsets, from its first site
  BitWriter site_writer_, predicate_writer_;
  uint32_t predicate_mask_ = 0;  // the bits of a site's predicates
  bool bad_ = false;
};

// A larger report is streamed: its bytes come in reads of this size, large enough for few system calls, small
// enough that the buffers allocated for each report stay cheap (LineReader's default, 1 MiB, costs page faults
// per report).
constexpr size_t kReadSize = 64u << 10;

// A regular file up to this size is read whole into a buffer each thread reuses, then parsed in place: one
// read(2) per report and no allocation. Memory stays bounded: at most this much report text per thread.
constexpr uint64_t kWholeReport = 1u << 20;

// Reads all of `fd` (`size` bytes by fstat) into `buffer`: false if it is larger or cannot be read (then it is
// streamed, from the start, and the reader reports any error as it does for every input).
bool read_whole(int fd, uint64_t size, std::vector<char>& buffer, std::string_view& text) {
  if (size >= kWholeReport) return false;
  size_t wanted = static_cast<size_t>(size) + 1;  // one more byte than fstat said: a file that grew is noticed
  if (buffer.size() < wanted) buffer.resize(wanted);
  size_t total = 0;
  while (total < wanted) {
    ssize_t n = ::read(fd, buffer.data() + total, wanted - total);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    total += static_cast<size_t>(n);
    // All fstat said, and not the byte more that was asked for: the end (no second read(2) to see 0).
    if (total == size) break;
  }
  if (total == wanted) return false;
  text = std::string_view(buffer.data(), total);
  return true;
}

// One report, in one pass (read_report with a samples visitor): its samples sections and whether it crashed.
class ReportCollector : public ReportVisitor {
 public:
  // Beyond this, main-backtrace text is not kept: a signature needs the module map and the first lines.
  static constexpr size_t kMaxBacktraceText = 1u << 20;

  ReportCollector(const SitesIndex& sites, Registry& registry)
      : samples_(sites, registry, cache_, observed, predicates) {}

  // Starts a new report; the buffers keep their memory from the last one (no allocation per report).
  void reset(const std::string& name, DiagnosticSink& sink) {
    samples_.reset(name, sink);
    observed.clear();  // a report left out may have left bits
    predicates.clear();
    signature.clear();
    mode_ = Mode::kOther;
    crashed_ = have_samples_ = false;
  }

  void read(LineReader& reader) {
    read_report(reader, *this, samples_);
    samples_.finish();
  }

  void begin_subreport(std::string_view id, uint64_t) override {
    mode_ = id == "samples" ? Mode::kSamples : id == "main-backtrace" ? Mode::kBacktrace : Mode::kOther;
    if (mode_ == Mode::kSamples) {
      have_samples_ = true;
    } else if (mode_ == Mode::kBacktrace) {
      crashed_ = true;
      backtrace_.clear();
    }
  }
  void body_line(std::string_view line, uint64_t) override { append(line, true); }
  void body_lines(std::string_view lines, uint64_t) override { append(lines, false); }
  void end_subreport(bool) override {
    if (mode_ == Mode::kSamples) {
      samples_.finish();
    } else if (mode_ == Mode::kBacktrace && signature.empty()) {
      signature = backtrace_;  // turned into a signature by the caller (it knows the frame count)
    }
    mode_ = Mode::kOther;
  }

  // Reads a run's summary (analysis/run_summary.h) instead of its report: false if its bytes are not one.
  bool read_summary(std::string_view bytes) {
    std::optional<std::string_view> backtrace;
    const bool ok = analysis::read_summary(bytes, have_samples_, backtrace,
                                           [this](const SummarySection& section) {
                                             samples_.add_summary_section(section);
                                           });
    crashed_ = backtrace.has_value();
    if (crashed_) signature = *backtrace;
    return ok;
  }

  bool crashed() const { return crashed_; }
  bool have_samples() const { return have_samples_; }

  RunBits observed, predicates;  // cleared as they are encoded
  std::string signature;  // the first main-backtrace body

 private:
  enum class Mode { kOther, kSamples, kBacktrace };
  // Only main-backtrace bodies come here: samples subreports go to samples_.
  void append(std::string_view text, bool add_newline) {
    if (mode_ != Mode::kBacktrace || backtrace_.size() > kMaxBacktraceText) return;
    backtrace_.append(text);
    if (add_newline) backtrace_.push_back('\n');
  }

  EntryCache cache_;
  SamplesCollector samples_;
  Mode mode_ = Mode::kOther;
  std::string backtrace_;
  bool crashed_ = false, have_samples_ = false;
};

void read_one(const std::string& name, size_t index, ReportCollector& collector, const ReadOptions& options,
              DiagnosticSink& sink, LocalRuns& local) {
  // Errors capped per report, as the formats library caps them per input: one stored run of a million bad
  // sections (any key may upload one) does not print a million lines.
  CappedSink capped(sink);
  std::optional<LineReader> input;
  int fd = -1;
  if (options.summary_of) {
    std::string_view summary = options.summary_of(index);
    local.bytes += summary.size();
    collector.reset(name, capped);
    if (!collector.read_summary(summary)) {
      sink.error(name, 0, "no readable summary (or stored report) of the run; left out");
      ++local.left_out;
      return;
    }
  } else if (options.text_of) {
    std::string_view text = options.text_of(index);
    local.bytes += text.size();
    collector.reset(name, capped);
    input.emplace(text, name, capped);
  } else {
    fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      sink.error(name, 0, std::string("cannot open: ") + std::strerror(errno) + "; left out");
      ++local.left_out;
      return;
    }
    std::string_view text;
    bool whole = false;
    if (struct stat st; ::fstat(fd, &st) == 0) {
      local.bytes += static_cast<uint64_t>(st.st_size);
      whole = S_ISREG(st.st_mode) && read_whole(fd, static_cast<uint64_t>(st.st_size), local.buffer, text);
      if (!whole && S_ISREG(st.st_mode)) ::lseek(fd, 0, SEEK_SET);
    }
    collector.reset(name, capped);
    if (whole) {
      input.emplace(text, name, capped);
    } else {
      input.emplace(fd, name, capped);
    }
  }
  if (input) {
    LineReader& reader = *input;
    reader.set_limits(LineReader::kMaxLineLength, kReadSize);
    collector.read(reader);
    if (fd >= 0) ::close(fd);
    if (reader.failed()) {  // the reader named the problem; the run is incomplete
      ++local.left_out;
      return;
    }
  }
  if (!collector.have_samples()) {
    sink.error(name, 0, "no samples subreport; left out");
    ++local.left_out;
    return;
  }
  // Appended as RunSet::add() would, the lists encoded straight from the bitsets.
  RunSet& runs = local.runs;
  runs.names.push_back(name);
  runs.failed.push_back(collector.crashed() ? 1 : 0);
  runs.crashed.push_back(collector.crashed() ? 1 : 0);
  runs.crash_group.push_back(-1);
  collector.observed.encode_and_clear(runs.site_data);
  runs.site_offsets.push_back(runs.site_data.size());
  collector.predicates.encode_and_clear(runs.predicate_data);
  runs.predicate_offsets.push_back(runs.predicate_data.size());
  local.file_index.push_back(index);
  local.crash_keys.push_back(!collector.crashed() ? ""
                            : options.crash_signer ? options.crash_signer(collector.signature, options.crash_frames)
                                                   : crash_signature(collector.signature, options.crash_frames));
}

}  // namespace

std::vector<std::string> list_reports(const std::vector<std::string>& operands, DiagnosticSink& sink, bool& ok) {
  std::vector<std::string> files;
  for (const std::string& operand : operands) {
    std::error_code error;
    fs::file_status status = fs::status(operand, error);
    if (error || !fs::exists(status)) {
      sink.error(operand, 0, "no such file or directory");
      ok = false;
      continue;
    }
    if (!fs::is_directory(status)) {
      files.push_back(operand);
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(operand, fs::directory_options::skip_permission_denied, error);
    for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      std::error_code type_error;
      if (it->is_regular_file(type_error)) found.push_back(it->path().string());
    }
    if (error) {
      sink.error(operand, 0, "cannot list the directory: " + error.message());
      ok = false;
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// What a RunReader keeps between its reads: the catalogue's registry and the crash groups by signature.
struct RunReader::State {
  explicit State(ReadResult& result) : registry(result.catalogue) {}
  Registry registry;
  std::map<std::string, int32_t> groups;
};

RunReader::RunReader(const SitesIndex& sites) : sites_(sites), state_(std::make_unique<State>(result_)) {}

RunReader::~RunReader() = default;

void RunReader::read(const std::vector<std::string>& files, const ReadOptions& options, DiagnosticSink& sink) {
  LockedSink locked(sink);
  unsigned jobs = options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, std::max<size_t>(files.size(), 1)));
  std::vector<LocalRuns> locals(jobs);
  std::atomic<size_t> next = 0;
  if (options.progress != nullptr) options.progress->set_total(files.size());
  auto work = [&](LocalRuns& local) {
    ReportCollector collector(sites_, state_->registry);
    for (size_t i; (i = next.fetch_add(1)) < files.size();) {
      const uint64_t before = local.bytes;
      read_one(files[i], i, collector, options, locked, local);
      if (options.progress != nullptr) options.progress->add(1, local.bytes - before);
    }
  };
  if (jobs == 1) {
    work(locals[0]);
  } else {
    std::vector<std::thread> threads;
    for (unsigned j = 0; j < jobs; ++j) threads.emplace_back(work, std::ref(locals[j]));
    for (std::thread& thread : threads) thread.join();
  }
  // Back into file order, crash signatures interned in that order.
  std::vector<std::pair<size_t, std::pair<unsigned, size_t>>> order;
  for (unsigned j = 0; j < jobs; ++j) {
    result_.left_out += locals[j].left_out;
    result_.bytes += locals[j].bytes;
    for (size_t r = 0; r < locals[j].runs.size(); ++r) order.push_back({locals[j].file_index[r], {j, r}});
  }
  std::sort(order.begin(), order.end());
  for (const auto& [file, where] : order) {
    const LocalRuns& local = locals[where.first];
    size_t r = where.second;
    int32_t group = -1;
    if (const std::string& key = local.crash_keys[r]; !key.empty()) {
      auto [it, added] = state_->groups.emplace(key, static_cast<int32_t>(result_.runs.crash_groups.size()));
      if (added) result_.runs.crash_groups.push_back(key);
      group = it->second;
    }
    result_.runs.add_from(local.runs, r, group);
  }
  result_.ok = result_.ok && !locked.errors();
}

RunReader::Mark RunReader::mark() const {
  Mark mark;
  mark.runs = result_.runs.size();
  mark.crash_groups = result_.runs.crash_groups.size();
  mark.sites = result_.catalogue.sites.size();
  mark.predicates = result_.catalogue.predicate_site.size();
  mark.registry = state_->registry.sizes();
  mark.left_out = result_.left_out;
  mark.bytes = result_.bytes;
  mark.ok = result_.ok;
  return mark;
}

void RunReader::truncate(const Mark& mark) {
  RunSet& runs = result_.runs;
  if (mark.runs < runs.size()) {
    runs.names.resize(mark.runs);
    runs.failed.resize(mark.runs);
    runs.crashed.resize(mark.runs);
    runs.crash_group.resize(mark.runs);
    runs.site_offsets.resize(mark.runs + 1);
    runs.site_data.resize(runs.site_offsets.back());
    runs.predicate_offsets.resize(mark.runs + 1);
    runs.predicate_data.resize(runs.predicate_offsets.back());
  }
  for (size_t g = mark.crash_groups; g < runs.crash_groups.size(); ++g) state_->groups.erase(runs.crash_groups[g]);
  runs.crash_groups.resize(std::min(mark.crash_groups, runs.crash_groups.size()));
  result_.catalogue.sites.resize(std::min(mark.sites, result_.catalogue.sites.size()));
  result_.catalogue.predicate_site.resize(std::min(mark.predicates, result_.catalogue.predicate_site.size()));
  state_->registry.forget(mark.registry);
  result_.left_out = mark.left_out;
  result_.bytes = mark.bytes;
  result_.ok = mark.ok;
}

size_t RunReader::memory() const {
  const RunSet& runs = result_.runs;
  size_t bytes = runs.site_data.capacity() + runs.predicate_data.capacity() +
                 (runs.site_offsets.capacity() + runs.predicate_offsets.capacity()) * sizeof(uint64_t) +
                 runs.failed.capacity() * 2 + runs.crash_group.capacity() * sizeof(int32_t) +
                 result_.catalogue.sites.capacity() * sizeof(Site) +
                 result_.catalogue.predicate_site.capacity() * sizeof(uint32_t);
  for (const std::string& name : runs.names) bytes += sizeof(std::string) + name.capacity();
  for (const std::string& group : runs.crash_groups) bytes += 2 * (sizeof(std::string) + group.capacity()) + 64;
  return bytes;
}

ReadResult read_runs(const std::vector<std::string>& files, const SitesIndex& sites, const ReadOptions& options,
                     DiagnosticSink& sink) {
  RunReader reader(sites);
  reader.read(files, options, sink);
  return std::move(reader.result());
}

}  // namespace sampler::analysis
