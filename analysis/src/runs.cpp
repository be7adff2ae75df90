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

#include "sections/cbf_decode.h"
#include "sections/line_reader.h"
#include "sections/markup.h"
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

// Byte classes of a samples line: digits (0 for '0', 1 for the others, so that a class is the "non-zero" bit
// itself), tab, line end, carriage return, anything else.
enum ByteClass : uint8_t { kZeroDigit = 0, kNonZeroDigit = 1, kTab, kNewline, kReturn, kOtherByte };
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> table{};
  table.fill(kOtherByte);
  table['0'] = kZeroDigit;
  for (char c = '1'; c <= '9'; ++c) table[static_cast<unsigned char>(c)] = kNonZeroDigit;
  table['\t'] = kTab;
  table['\n'] = kNewline;
  table['\r'] = kReturn;
  return table;
}();

// A samples line of at most 7 bytes before its "\n" ("12\t0\t3\n", most lines), read as one 64-bit word:
// the bytes are classified all at once (SWAR), so that no branch depends on how many digits a counter has.
// Sets `nonzero` (bit c: counter c is not zero) and `column` (counters - 1); returns the line's length with its
// "\n", or 0 when the line is longer or is anything but digits and tabs with a digit in every counter: the
// byte loop then reads it (and judges it). `p` must have 8 readable bytes.
size_t short_line(const char* p, uint32_t& nonzero, uint32_t& column) {
  if constexpr (std::endian::native != std::endian::little) return 0;
  constexpr uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080, kLow = 0x7f7f7f7f7f7f7f7f;
  uint64_t word;
  std::memcpy(&word, p, 8);
  // Per byte, its high bit set when the byte is c (computed without carries from one byte into the next).
  auto equal = [word](uint8_t c) {
    uint64_t x = word ^ (kOnes * c);
    return ~(((x & kLow) + kLow) | x | kLow);
  };
  uint64_t newlines = equal('\n');
  uint64_t newline = newlines & -newlines;  // the first "\n"
  uint64_t before = (newline - 1) & kHigh;  // the bytes before it
  uint64_t x = word ^ (kOnes * '0');  // digits become 0 to 9
  uint64_t digit = ~(((x & kLow) + kOnes * (0x80 - 10)) | x) & before;  // below 10
  uint64_t nonzero_digit = ((x & kLow) + kLow) & digit;                  // and not 0
  uint64_t tab = equal('\t') & before;
  // Each counter has a digit: no tab first, last or next to another.
  bool empty_counter = (tab & (0x80 | (tab << 8) | (newline >> 8))) != 0;
  if (newline == 0 || before == 0 || (digit | tab) != before || empty_counter) return 0;
  uint32_t bits = 0, c = 0;
  for (uint64_t t = tab; t != 0; t &= t - 1, ++c) {  // as many rounds as the scheme has tabs: predictable
    uint64_t counter = (t & -t) - 1;                  // the bytes before this tab
    bits |= static_cast<uint32_t>((nonzero_digit & counter) != 0) << c;
    nonzero_digit &= ~counter;
  }
  nonzero = bits | static_cast<uint32_t>(nonzero_digit != 0) << c;
  column = c;
  return static_cast<size_t>(__builtin_ctzll(newline) >> 3) + 1;
}

// Assigns site and predicate ids to sites sections as the threads meet them (under a lock; each thread caches).
class Registry {
 public:
  explicit Registry(Catalogue& catalogue) : catalogue_(catalogue) {}

  // The entry of `sites`; `counters` is the first samples line's count (used for schemes SPEC does not name).
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
      size_t end = body.find('\n');
      std::string_view line = body.substr(0, end);
      body = end == std::string_view::npos ? std::string_view() : body.substr(end + 1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
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
    return entry;
  }

  // True the first time a key is reported missing (one error per key over all reports).
  bool first_missing(std::string_view unit, std::string_view scheme) {
    std::lock_guard lock(mutex_);
    return missing_.emplace(std::string(unit), std::string(scheme)).second;
  }

 private:
  Catalogue& catalogue_;
  std::mutex mutex_;
  std::unordered_map<const IndexedSites*, SectionEntry> entries_;
  std::set<std::pair<std::string, std::string>> missing_;
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

// The samples sections of one report's samples subreport: counters -> observed sites and true predicates.
class SamplesCollector : public SamplesVisitor {
 public:
  SamplesCollector(const SitesIndex& sites, Registry& registry, EntryCache& cache, DiagnosticSink& sink,
                   std::vector<uint32_t>& observed, std::vector<uint32_t>& predicates)
      : sites_(sites), registry_(registry), cache_(cache), sink_(sink), observed_(observed), predicates_(predicates) {}

  /// Starts a new report (named `name` in diagnostics).
  void reset(const std::string& name) {
    finish();
    name_ = &name;
    sorted_ = true;
  }

  /// True if the ids were written in increasing order, each once (then they need no sorting).
  bool sorted() const { return sorted_; }

  void begin_section(const SampleSectionHeader& header) override {
    finish();  // the reader ends every section; this keeps the lists right even if it did not
    if (header.kind != SampleSectionKind::kSamples) return;
    const IndexedSites* found = sites_.find(header.unit, header.scheme);
    if (found == nullptr) {
      if (registry_.first_missing(header.unit, header.scheme)) {
        sink_.error(*name_, header.line, "no site information for unit " + std::string(header.unit) +
                                            ", scheme '" + std::string(header.scheme) + "'");
      }
      return;
    }
    if (found->conflicting || scheme_kind(found->scheme) == SchemeKind::kBounds) return;
    active_ = true;
    sites_entry_ = found;
    observed_start_ = observed_end_ = observed_.size();
    predicates_start_ = predicates_end_ = predicates_.size();
    room_ = false;
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

  /// Ends a section still open (its lists are cut back to what was written).
  void finish() {
    if (active_) end_section(false);
  }

  void end_section(bool complete) override {
    if (!active_) return;
    active_ = false;
    // SPEC section 5: a line count that differs from the sites' is an error and the section is left out; a
    // section cut short by the end of the input keeps what it has.
    if (lines_ > sites_entry_->site_count || (complete && lines_ != sites_entry_->site_count) || bad_) {
      if (!bad_) {
        sink_.error(*name_, section_line_,
                    "unit " + sites_entry_->unit + ", scheme '" + sites_entry_->scheme + "': " +
                        std::to_string(lines_) + " samples lines, but " + std::to_string(sites_entry_->site_count) +
                        " sites in '" + sites_entry_->label + "':" + std::to_string(sites_entry_->line));
      }
      observed_end_ = observed_start_;
      predicates_end_ = predicates_start_;
    }
    if (room_) {
      observed_.resize(observed_end_);
      predicates_.resize(predicates_end_);
    }
    // A section's ids increase; the lists stay sorted while each section's come after the last one's (the usual
    // case: a program writes its sections in the same order every run), which costs one test per section.
    auto follows = [](const std::vector<uint32_t>& ids, size_t start, size_t end) {
      return start == 0 || end == start || ids[start] > ids[start - 1];
    };
    sorted_ = sorted_ && follows(observed_, observed_start_, observed_end_) &&
              follows(predicates_, predicates_start_, predicates_end_);
  }

 private:
  // Whole lines, each ending in "\n" (the last one may not): the hot loop of reading. Only whether each counter
  // is zero matters: no number is converted, so none can overflow.
  void take_lines(std::string_view lines, uint64_t number) {
    const char* p = lines.data();
    const char* end = p + lines.size();
    while (p < end) {
      uint32_t nonzero = 0, column = 0;
      bool well_formed = true;
      p = scan_line(p, end, nonzero, column, well_formed);
      uint64_t line_number = number++;
      uint64_t index = lines_++;
      if (bad_ || index >= sites_entry_->site_count) continue;
      if (!have_entry_ || !well_formed || column + 1 != entry_.counters) [[unlikely]] {
        if (!check_line(column + 1, well_formed, line_number)) continue;
      }
      record(static_cast<uint32_t>(index), nonzero);
    }
  }

  // One line from p (< end): which counters are non-zero (bit c for counter c), their count - 1, and whether
  // the line is digits and tabs with a digit in every counter (a "\r" before the "\n" allowed). Returns the
  // start of the next line. Short lines (most of them) go through short_line(); the others, one byte at a time.
  static const char* scan_line(const char* p, const char* end, uint32_t& nonzero, uint32_t& column,
                               bool& well_formed) {
    if (end - p >= 8) {
      if (size_t length = short_line(p, nonzero, column)) return p + length;
    }
    bool digits = false;
    for (; p < end; ++p) {
      uint8_t kind = kByteClass[static_cast<unsigned char>(*p)];
      if (kind <= kNonZeroDigit) {  // the common case, without a branch on the digit's value
        digits = true;
        nonzero |= static_cast<uint32_t>(kind) << column;
      } else if (kind == kNewline) {
        break;
      } else if (kind == kTab) {
        if (!digits || column + 1 >= kMaxCounters) well_formed = false;
        else ++column;
        digits = false;
      } else if (!(kind == kReturn && (p + 1 == end || p[1] == '\n'))) {
        well_formed = false;
      }
    }
    if (!digits) well_formed = false;
    return p + 1;  // past the "\n"
  }

  // The first line of a section (its counters' count gives the entry of a scheme SPEC does not name), or one
  // that does not fit: false (and the section is left out) if it is malformed.
  bool check_line(uint32_t counters, bool well_formed, uint64_t number) {
    if (!have_entry_ && well_formed) {
      entry_ = registry_.enter(*sites_entry_, counters);
      cache_.emplace(sites_entry_, entry_);
      have_entry_ = true;
      make_room();
    }
    if (!well_formed || counters != entry_.counters) {
      sink_.error(*name_, number, "malformed samples line for scheme '" + sites_entry_->scheme +
                                      "': the section is left out");
      bad_ = true;
      return false;
    }
    return true;
  }

  // Site `index` of the section: the site if any counter is non-zero, and its true predicates. Written without a
  // branch on the values (they vary from line to line): every slot is written, and the ends move past the ids
  // that count. The entry's fields are read first: the stores could alias them.
  void record(uint32_t index, uint32_t nonzero) {
    const uint32_t per_site = entry_.per_site;
    const uint32_t base = entry_.first_predicate + index * per_site;
    const uint32_t mask = true_predicates(entry_.kind, nonzero);
    observed_[observed_end_] = entry_.first_site + index;
    observed_end_ += nonzero != 0;
    uint32_t* const start = predicates_.data() + predicates_end_;
    uint32_t* out = start;
    for (uint32_t i = 0; i < per_site; ++i) {
      *out = base + i;
      out += (mask >> i) & 1;
    }
    predicates_end_ += static_cast<size_t>(out - start);
  }

  // Grows the lists by the most this section can add (each site once, each of its predicates once), so that
  // take_line() writes without a check per id; end_section() cuts them back to what was written.
  void make_room() {
    observed_.resize(observed_start_ + entry_.site_count);
    predicates_.resize(predicates_start_ + static_cast<size_t>(entry_.site_count) * entry_.per_site);
    room_ = true;
  }

 private:
  const SitesIndex& sites_;
  Registry& registry_;
  EntryCache& cache_;
  DiagnosticSink& sink_;
  const std::string* name_ = nullptr;
  std::vector<uint32_t>& observed_;
  std::vector<uint32_t>& predicates_;
  bool active_ = false;
  const IndexedSites* sites_entry_ = nullptr;
  bool have_entry_ = false;
  SectionEntry entry_;
  uint64_t section_line_ = 0;
  uint64_t lines_ = 0;
  size_t observed_start_ = 0, observed_end_ = 0;      // this section's ids: [start, end) of observed_
  size_t predicates_start_ = 0, predicates_end_ = 0;  // and of predicates_
  bool room_ = false;                                 // the lists were grown for this section
  bool bad_ = false;
  bool sorted_ = true;
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

  ReportCollector(const SitesIndex& sites, Registry& registry, DiagnosticSink& sink)
      : samples_(sites, registry, cache_, sink, observed, predicates) {}

  // Starts a new report; the buffers keep their memory from the last one (no allocation per report).
  void reset(const std::string& name) {
    samples_.reset(name);
    observed.clear();
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

  bool crashed() const { return crashed_; }
  bool have_samples() const { return have_samples_; }
  bool sorted() const { return samples_.sorted(); }

  std::vector<uint32_t> observed, predicates;
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

void sort_unique(std::vector<uint32_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

void read_one(const std::string& name, size_t index, ReportCollector& collector, const ReadOptions& options,
              DiagnosticSink& sink, LocalRuns& local) {
  int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
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
  collector.reset(name);
  std::optional<LineReader> input;
  if (whole) {
    input.emplace(text, name, sink);
  } else {
    input.emplace(fd, name, sink);
  }
  LineReader& reader = *input;
  reader.set_limits(LineReader::kMaxLineLength, kReadSize);
  collector.read(reader);
  ::close(fd);
  if (reader.failed()) {  // the reader named the problem; the run is incomplete
    ++local.left_out;
    return;
  }
  if (!collector.have_samples()) {
    sink.error(name, 0, "no samples subreport; left out");
    ++local.left_out;
    return;
  }
  if (!collector.sorted()) {  // sections out of the usual order, or one twice
    sort_unique(collector.observed);
    sort_unique(collector.predicates);
  }
  local.runs.add(name, collector.crashed(), collector.crashed(), -1, collector.observed, collector.predicates);
  local.file_index.push_back(index);
  local.crash_keys.push_back(!collector.crashed() ? ""
                            : options.crash_signer ? options.crash_signer(collector.signature, options.crash_frames)
                                                   : crash_signature(collector.signature, options.crash_frames));
}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
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

ReadResult read_runs(const std::vector<std::string>& files, const SitesIndex& sites, const ReadOptions& options,
                     DiagnosticSink& sink) {
  ReadResult result;
  LockedSink locked(sink);
  Registry registry(result.catalogue);
  unsigned jobs = options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, std::max<size_t>(files.size(), 1)));
  std::vector<LocalRuns> locals(jobs);
  std::atomic<size_t> next = 0;
  auto work = [&](LocalRuns& local) {
    ReportCollector collector(sites, registry, locked);
    for (size_t i; (i = next.fetch_add(1)) < files.size();) read_one(files[i], i, collector, options, locked, local);
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
    result.left_out += locals[j].left_out;
    result.bytes += locals[j].bytes;
    for (size_t r = 0; r < locals[j].runs.size(); ++r) order.push_back({locals[j].file_index[r], {j, r}});
  }
  std::sort(order.begin(), order.end());
  std::map<std::string, int32_t> groups;
  for (const auto& [file, where] : order) {
    const LocalRuns& local = locals[where.first];
    size_t r = where.second;
    int32_t group = -1;
    if (const std::string& key = local.crash_keys[r]; !key.empty()) {
      auto [it, added] = groups.emplace(key, static_cast<int32_t>(result.runs.crash_groups.size()));
      if (added) result.runs.crash_groups.push_back(key);
      group = it->second;
    }
    result.runs.add_from(local.runs, r, group);
  }
  result.ok = !locked.errors();
  return result;
}

bool apply_labels(const std::string& labels_path, RunSet& runs, DiagnosticSink& sink) {
  int fd = ::open(labels_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    sink.error(labels_path, 0, std::string("cannot open: ") + std::strerror(errno));
    return false;
  }
  std::unordered_map<std::string, size_t> by_name;
  for (size_t r = 0; r < runs.size(); ++r) by_name.emplace(fs::path(runs.names[r]).lexically_normal().string(), r);
  bool ok = true;
  LineReader reader(fd, labels_path, sink);
  for (std::string_view line; reader.next(line);) {
    if (line.empty() || line.front() == '#') continue;
    size_t tab = line.rfind('\t');
    std::string_view label = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
    if (label != "success" && label != "failure") {
      sink.error(labels_path, reader.line_number(), "expected PATH, a tab, then 'success' or 'failure'");
      ok = false;
      continue;
    }
    std::string path = fs::path(std::string(line.substr(0, tab))).lexically_normal().string();
    auto found = by_name.find(path);
    if (found == by_name.end()) {
      sink.warning(labels_path, reader.line_number(), "no report '" + path + "' was read; label ignored");
      continue;
    }
    runs.failed[found->second] = label == "failure" ? 1 : 0;
  }
  ::close(fd);
  return ok && !reader.failed();
}

bool is_system_library(std::string_view name) {
  for (std::string_view prefix : {"libc.so", "libc-", "libpthread", "ld-linux", "ld64.so", "libstdc++", "libgcc_s",
                                  "libm.so", "libasan", "libubsan", "libtsan", "libsampler.so"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::string crash_signature(std::string_view body, size_t frames) {
  struct Mapping {
    uint64_t start, size, vaddr, module;
  };
  std::map<uint64_t, std::string> modules;
  std::vector<Mapping> mappings;
  std::string signal, legacy;
  size_t legacy_frames = 0;
  std::string_view cbf;
  while (!body.empty()) {
    size_t end = body.find('\n');
    std::string_view line = body.substr(0, end);
    body = end == std::string_view::npos ? std::string_view() : body.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("cbf:")) {
      if (cbf.empty()) cbf = line.substr(4);
    } else if (line.starts_with("signal:")) {
      std::string_view rest = line.substr(7);
      size_t colon = rest.find(':');
      std::string_view name = colon == std::string_view::npos ? rest : rest.substr(colon + 1);
      signal = std::string(name.substr(0, name.find(':')));
    } else if (std::optional<markup::Node> node = markup::sole_element(line)) {
      markup::ParseError error;
      if (node->tag == "module") {
        markup::ModuleElement module;
        if (markup::parse_module(*node, module, error)) {
          std::string name(module.name);
          size_t slash = name.rfind('/');
          modules[module.id] = slash == std::string::npos ? name : name.substr(slash + 1);
        }
      } else if (node->tag == "mmap") {
        markup::MmapElement mmap;
        if (markup::parse_mmap(*node, mmap, error)) {
          mappings.push_back({mmap.start, mmap.size, mmap.module_relative_address, mmap.module_id});
        }
      }
    } else if (line.find('[') != std::string_view::npos && line.ends_with("]") && legacy_frames < frames) {
      // A legacy backtrace_symbols line ("ccrypt[0x804ff1c]"): kept as it is.
      legacy += (legacy.empty() ? "" : " < ") + std::string(line);
      ++legacy_frames;
    }
  }
  std::string stack;
  if (!cbf.empty()) {
    // Each frame as MODULE+0xOFFSET, and whether it is in a system library. At most kMaxSkipped frames of those
    // are skipped at the top, so that abort() or a libc function does not put every stack that goes through it
    // into one group: the signature starts at the first frame of the program's own code.
    constexpr size_t kMaxSkipped = 16;
    std::vector<std::pair<std::string, bool>> top;
    cbf::DecodedStack decoded = cbf::decode_stack_base64(cbf);
    for (const cbf::Item& item : decoded.items) {
      if (top.size() >= frames + kMaxSkipped) break;
      if (item.type != cbf::ItemType::kFrame && item.type != cbf::ItemType::kRepeat) continue;
      uint64_t address = item.frame.address;
      std::string where = hex(address);
      bool system = false;
      for (const Mapping& m : mappings) {
        if (address >= m.start && address - m.start < m.size) {
          auto module = modules.find(m.module);
          std::string name = module != modules.end() ? module->second : "module" + std::to_string(m.module);
          system = is_system_library(name);
          where = name + "+" + hex(address - m.start + m.vaddr);
          break;
        }
      }
      top.emplace_back(std::move(where), system);
    }
    size_t first = 0;
    while (first < top.size() && top[first].second) ++first;
    if (first == top.size()) first = 0;  // all in system libraries: keep them
    for (size_t i = first; i < top.size() && i < first + frames; ++i) {
      stack += (stack.empty() ? "" : " < ") + top[i].first;
    }
    if (first > 0) stack += " (after " + std::to_string(first) + " frames in system libraries)";
  } else {
    stack = legacy;
  }
  if (stack.empty() && signal.empty()) return "";
  return (signal.empty() ? std::string("crash") : signal) + (stack.empty() ? "" : " at " + stack);
}

}  // namespace sampler::analysis
