// A run's summary at ingest (analysis/run_summary.h).
#include "analysis/run_summary.h"

#include <bit>
#include <vector>

#include "analysis/id_list.h"
#include "analysis/predicates.h"
#include "samples_line.h"
#include "sections/line_reader.h"
#include "sections/site_info.h"

namespace sampler::analysis {

namespace {

// As read_runs() keeps it: beyond this, main-backtrace text is not kept (a signature needs its first lines).
constexpr size_t kMaxBacktraceText = 1u << 20;

// Reads a summary's bytes, every length checked against the end (a stored summary may be corrupt).
struct SummaryCursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; ok; shift += 7) {
      if (p == end || shift > 63) break;
      const uint8_t byte = *p++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
    }
    ok = false;
    return 0;
  }
  std::string_view text() {
    const uint64_t size = varint();
    if (!ok || size > static_cast<uint64_t>(end - p)) {
      ok = false;
      return {};
    }
    std::string_view value(reinterpret_cast<const char*>(p), static_cast<size_t>(size));
    p += size;
    return value;
  }
  // An id list (id_list.h) of ids below `limit`: where it starts, once its whole length was checked.
  const uint8_t* list(uint64_t limit) {
    const uint8_t* start = p;
    const uint64_t header = varint();
    const uint64_t count = header >> 1;
    if (count == 0) return start;
    if (header & 1) {
      const uint64_t first = varint(), bytes = varint();
      if (!ok || first >= limit || bytes > static_cast<uint64_t>(end - p) || bytes > ((limit - first) >> 3) + 1) {
        ok = false;
      } else {
        p += bytes;
      }
    } else {
      uint64_t id = 0;
      for (uint64_t i = 0; ok && i < count; ++i) {
        id += varint();
        if (id >= limit) ok = false;
      }
    }
    return ok ? start : nullptr;
  }
};

void put_string(std::vector<uint8_t>& out, std::string_view text) {
  id_list::put_varint(out, text.size());
  out.insert(out.end(), text.begin(), text.end());
}

}  // namespace

struct RunSummarizer::State {
  enum class Mode { kOther, kBacktrace };
  Mode mode = Mode::kOther;
  bool have_samples = false, crashed = false, backtrace_done = false;
  std::string backtrace;  // the first main-backtrace body
  size_t sections = 0;
  std::vector<uint8_t> out;  // the sections written so far
  size_t samples_sections = 0;

  // The samples section being read.
  bool active = false, bounds = false, malformed = false;
  uint64_t line = 0, lines = 0, malformed_index = 0, malformed_line = 0;
  std::string unit, scheme;
  SchemeKind kind = SchemeKind::kPerCounter;
  uint32_t counters = 0, per_site = 0, mask = 0;
  std::vector<uint32_t> sites, predicates;

  void take(uint32_t nonzero, uint32_t column, bool well_formed, uint64_t number) {
    const uint64_t index = lines++;
    if (bounds || malformed) return;
    if (counters == 0 && well_formed) set_counters(column + 1);
    if (!well_formed || column + 1 != counters) {
      malformed = true;
      malformed_index = index;
      malformed_line = number;
      return;
    }
    if (nonzero == 0) return;
    sites.push_back(static_cast<uint32_t>(index));
    const uint32_t truth = true_predicates(kind, nonzero) & mask;
    for (uint32_t bits = truth; bits != 0; bits &= bits - 1) {
      predicates.push_back(static_cast<uint32_t>(index * per_site) + static_cast<uint32_t>(std::countr_zero(bits)));
    }
  }

  void set_counters(uint32_t n) {
    counters = n;
    per_site = predicate_count(kind, counters);
    mask = per_site >= 32 ? ~0u : (1u << per_site) - 1;
  }
};

RunSummarizer::RunSummarizer() : state_(std::make_unique<State>()) {}
RunSummarizer::~RunSummarizer() = default;

void RunSummarizer::begin_subreport(std::string_view id, uint64_t) {
  State& s = *state_;
  s.mode = State::Mode::kOther;
  if (id == "samples") {
    s.have_samples = true;
  } else if (id == "main-backtrace") {
    s.crashed = true;
    if (!s.backtrace_done) {
      s.mode = State::Mode::kBacktrace;
      s.backtrace.clear();
    }
  }
}

void RunSummarizer::body_lines(std::string_view lines, uint64_t) {
  State& s = *state_;
  if (s.mode == State::Mode::kBacktrace && s.backtrace.size() <= kMaxBacktraceText) s.backtrace.append(lines);
}

void RunSummarizer::body_line(std::string_view line, uint64_t) {
  State& s = *state_;
  if (s.mode != State::Mode::kBacktrace || s.backtrace.size() > kMaxBacktraceText) return;
  s.backtrace.append(line);
  s.backtrace.push_back('\n');
}

void RunSummarizer::end_subreport(bool) {
  State& s = *state_;
  // The first main-backtrace with a body is the run's stack, as read_runs() takes it.
  if (s.mode == State::Mode::kBacktrace && !s.backtrace.empty()) s.backtrace_done = true;
  s.mode = State::Mode::kOther;
}

void RunSummarizer::begin_section(const SampleSectionHeader& header) {
  State& s = *state_;
  ++s.sections;
  if (header.kind != SampleSectionKind::kSamples) return;
  s.active = true;
  s.line = header.line;
  s.unit = header.unit;
  s.scheme = header.scheme;
  s.kind = scheme_kind(s.scheme);
  s.bounds = s.kind == SchemeKind::kBounds;
  s.malformed = false;
  s.lines = 0;
  s.counters = 0;
  // A scheme docs/formats.md names has its counters; another's come from its first line (as read_runs() does).
  if (const SchemeInfo* info = find_scheme(s.scheme); info != nullptr) {
    s.set_counters(static_cast<uint32_t>(info->counters));
  }
  s.sites.clear();
  s.predicates.clear();
}

void RunSummarizer::section_lines(std::string_view lines, uint64_t first_line_number) {
  State& s = *state_;
  if (!s.active) return;
  const char* p = lines.data();
  const char* end = p + lines.size();
  uint64_t number = first_line_number;
  while (p < end) {
    uint32_t nonzero = 0, column = 0;
    bool well_formed = true;
    p = samples_line::scan_line(p, end, nonzero, column, well_formed);
    s.take(nonzero, column, well_formed, number++);
  }
}

void RunSummarizer::section_line(std::string_view line, uint64_t line_number) {
  State& s = *state_;
  if (!s.active) return;
  uint32_t nonzero = 0, column = 0;
  bool well_formed = true;
  samples_line::scan_line(line.data(), line.data() + line.size(), nonzero, column, well_formed);
  s.take(nonzero, column, well_formed, line_number);
}

void RunSummarizer::end_section(bool complete) {
  State& s = *state_;
  if (!s.active) return;
  s.active = false;
  ++s.samples_sections;
  std::vector<uint8_t>& out = s.out;
  id_list::put_varint(out, s.line);
  put_string(out, s.unit);
  put_string(out, s.scheme);
  id_list::put_varint(out, s.lines);
  id_list::put_varint(out, (complete ? 1u : 0u) | (s.malformed ? 2u : 0u));
  if (s.malformed) {
    id_list::put_varint(out, s.malformed_index);
    id_list::put_varint(out, s.malformed_line);
  }
  const bool lists = !s.bounds && !s.malformed;
  id_list::put_varint(out, lists ? s.counters : 0);
  if (!lists) {
    s.sites.clear();
    s.predicates.clear();
  }
  id_list::encode(s.sites, out);
  id_list::encode(s.predicates, out);
}

size_t RunSummarizer::sections() const { return state_->sections; }

std::string RunSummarizer::bytes() const {
  const State& s = *state_;
  std::vector<uint8_t> head;
  id_list::put_varint(head, 1);  // the format
  id_list::put_varint(head, (s.have_samples ? 1u : 0u) | (s.crashed ? 2u : 0u));
  if (s.crashed) put_string(head, s.backtrace);
  id_list::put_varint(head, s.samples_sections);
  std::string bytes(head.begin(), head.end());
  bytes.append(s.out.begin(), s.out.end());
  return bytes;
}

std::string summarize_report(std::string_view text) {
  DiagnosticList ignored;  // what read_runs() would say of the report is said when the summary is read
  LineReader input(text, "report", ignored);
  RunSummarizer summarizer;
  read_report(input, summarizer, summarizer);
  return summarizer.bytes();
}

bool read_summary(std::string_view bytes, bool& have_samples, std::optional<std::string_view>& backtrace,
                  const std::function<void(const SummarySection&)>& section) {
  SummaryCursor in{reinterpret_cast<const uint8_t*>(bytes.data()),
                   reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size()};
  const uint64_t format = in.varint(), flags = in.varint();
  if (!in.ok || format != 1) return false;
  have_samples = (flags & 1) != 0;
  backtrace.reset();
  if ((flags & 2) != 0) backtrace = in.text();
  const uint64_t sections = in.varint();
  for (uint64_t i = 0; in.ok && i < sections; ++i) {
    SummarySection s;
    s.line = in.varint();
    s.unit = in.text();
    s.scheme = in.text();
    s.lines = in.varint();
    const uint64_t state = in.varint();
    s.complete = (state & 1) != 0;
    s.malformed = (state & 2) != 0;
    if (s.malformed) {
      s.malformed_index = in.varint();
      s.malformed_line = in.varint();
    }
    const uint64_t counters = in.varint();
    if (!in.ok || counters > kMaxCounters) return false;
    s.counters = static_cast<uint32_t>(counters);
    const uint64_t per_site = predicate_count(scheme_kind(s.scheme), s.counters);
    s.sites = in.list(s.lines);
    s.predicates = in.list(s.lines * per_site);
    if (in.ok) section(s);
  }
  return in.ok && in.p == in.end;
}

}  // namespace sampler::analysis
