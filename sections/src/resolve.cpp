// Joining samples and timestamps with their sites (see sections/resolve.h; docs/tools.md; the sampler manual,
// "samples subreport"). Finding the sites is sections/src/sites_index.cpp's part.
#include "sections/resolve.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "checked.h"
#include "sections/site_info.h"
#include "text_lines.h"

namespace sampler {

// -------------------------------------------------------------------------------------------------------------
// Values

std::optional<uint64_t> parse_counter(std::string_view text) { return checked::parse_decimal(text); }

std::optional<BoundValue> parse_bound_value(std::string_view text) {
  BoundValue result;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    // A pointer: hex digits of either case whose value fits in 64 bits.
    auto value = checked::parse_hex(text.substr(2));
    if (!value) return std::nullopt;
    result.magnitude = *value;
    return result;
  }
  if (!text.empty() && text[0] == '-') {
    result.negative = true;
    text.remove_prefix(1);
  }
  // Leading zeros are allowed, so the 20-digit limit of parse_counter does not apply: strip them first.
  size_t first = text.find_first_not_of('0');
  std::string_view significant = first == std::string_view::npos ? text.substr(text.empty() ? 0 : text.size() - 1)
                                                                 : text.substr(first);
  auto magnitude = parse_counter(significant);
  if (!magnitude) return std::nullopt;
  result.magnitude = *magnitude;
  if (result.magnitude == 0) result.negative = false;  // "-0" is 0
  return result;
}

bool bound_less(const BoundValue& a, const BoundValue& b) {
  if (a.negative != b.negative) return a.negative;
  return a.negative ? a.magnitude > b.magnitude : a.magnitude < b.magnitude;
}

// -------------------------------------------------------------------------------------------------------------
// The join

namespace {

using text::next_line;
using text::place;
using text::quote_value;

/// Splits a line at tabs into `fields` (cleared first); views into `line`.
void split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return;
    }
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

class Joiner : public SamplesVisitor {
 public:
  Joiner(const std::string& input_name, const SitesIndex& sites, const ResolveOptions& options,
         const std::function<void(std::string_view)>& write, DiagnosticSink& sink)
      : input_name_(input_name), sites_(sites), options_(options), write_(write), sink_(sink) {}

  void begin_section(const SampleSectionHeader& header) override;
  void section_line(std::string_view line, uint64_t line_number) override;
  void end_section(bool complete) override;

  /// Writes every merged group (merge mode) and flushes the output.
  void finish();
  bool ok() const { return ok_; }

 private:
  /// All sections of one key (one section when not merging), printed at the first one's place.
  struct Group {
    const IndexedSites* sites;
    const SchemeInfo* scheme_info;  // nullptr: unknown scheme
    std::string when;               // timestamps only
    std::vector<size_t> occurrences;
  };
  /// One samples/timestamps section as read.
  struct Occurrence {
    size_t group;
    uint64_t tag_line;
    size_t begin;                     // its lines in arena_, each ending in "\n"
    size_t end;
    size_t line_count = 0;
    std::vector<size_t> bad_lines;    // indices of malformed lines, ascending
    std::string first_problem;        // the first malformed line's problem, reported at the section's end
    uint64_t first_problem_line = 0;
    std::string last_problem;         // the last line's problem, if it was malformed
    uint64_t last_line_number = 0;
    bool usable = true;
  };

  void error(uint64_t line, std::string message) {
    sink_.error(input_name_, line, std::move(message));
    ok_ = false;
  }
  std::string key_text(const Group& group) const {
    return "unit " + group.sites->unit + " scheme " + group.sites->scheme;
  }
  /// Checks one samples line against its scheme; returns an error message or "" if it is fine.
  std::string check_line(const Group& group, std::string_view line);
  void write_group(const Group& group);
  void write_single(const Group& group, const Occurrence& occurrence);
  void write_merged(const Group& group);
  void write_row(const Group& group, std::string_view site, std::string_view values);
  void flush_if_full() {
    if (out_.size() >= kFlushSize) flush();
  }
  void flush() {
    if (!out_.empty()) write_(out_);
    out_.clear();
  }

  static constexpr size_t kFlushSize = 1u << 16;

  const std::string& input_name_;
  const SitesIndex& sites_;
  const ResolveOptions& options_;
  const std::function<void(std::string_view)>& write_;
  DiagnosticSink& sink_;
  bool ok_ = true;

  std::string arena_;  // the kept samples lines
  std::vector<Group> groups_;
  std::vector<Occurrence> occurrences_;
  std::unordered_map<std::string, size_t> group_by_key_;  // merge mode
  std::unordered_set<std::string> reported_unknown_;
  Occurrence* current_ = nullptr;  // the section being read, nullptr if skipped
  std::vector<std::string_view> fields_;
  std::string out_;
};

void Joiner::begin_section(const SampleSectionHeader& header) {
  current_ = nullptr;
  if (header.kind != options_.kind) return;
  const IndexedSites* sites = sites_.find(header.unit, header.scheme);
  if (sites == nullptr) {
    std::string key = std::string(header.unit) + std::string(header.scheme);
    if (reported_unknown_.insert(key).second) {
      error(header.line, "no sites for unit " + std::string(header.unit) + " scheme " +
                             std::string(header.scheme) + " in the files given");
    }
    return;
  }
  if (sites->conflicting) return;  // reported once, when the index was built

  size_t group_index;
  std::string key = std::string(header.unit) + std::string(header.scheme) + '\n' + std::string(header.when);
  auto found = options_.merge ? group_by_key_.find(key) : group_by_key_.end();
  if (found != group_by_key_.end()) {
    group_index = found->second;
  } else {
    group_index = groups_.size();
    groups_.push_back(Group{sites, find_scheme(header.scheme), std::string(header.when), {}});
    if (options_.merge) group_by_key_.emplace(std::move(key), group_index);
  }
  groups_[group_index].occurrences.push_back(occurrences_.size());
  occurrences_.push_back(Occurrence{group_index, header.line, arena_.size(), arena_.size()});
  current_ = &occurrences_.back();
}

std::string Joiner::check_line(const Group& group, std::string_view line) {
  if (options_.kind == SampleSectionKind::kTimestamps) {
    if (!parse_counter(line)) return quote_value(line) + " is not a timestamp (an unsigned decimal integer)";
    return {};
  }
  const SchemeInfo* scheme = group.scheme_info;
  if (scheme == nullptr) return {};  // unknown scheme: carried through untouched (docs/formats.md section 2)
  split_fields(line, fields_);
  if (fields_.size() != static_cast<size_t>(scheme->counters)) {
    return std::to_string(fields_.size()) + (fields_.size() == 1 ? " value" : " values") + " where scheme " +
           std::string(scheme->name) + " has " + std::to_string(scheme->counters) + " per site";
  }
  for (std::string_view field : fields_) {
    if (scheme->is_bounds) {
      if (!parse_bound_value(field))
        return quote_value(field) + " is not a bound (a decimal or 0x hexadecimal integer)";
    } else if (!parse_counter(field)) {
      return quote_value(field) + " is not a counter (an unsigned decimal integer of at most 64 bits)";
    }
  }
  return {};
}

void Joiner::section_line(std::string_view line, uint64_t line_number) {
  if (current_ == nullptr) return;
  Occurrence& occurrence = *current_;
  const Group& group = groups_[occurrence.group];
  size_t index = occurrence.line_count++;
  // Lines past the sites' count make the section unusable (reported at its end): don't keep them.
  if (occurrence.line_count > group.sites->site_count) return;
  occurrence.last_line_number = line_number;
  std::string problem = check_line(group, line);
  if (!problem.empty()) {
    if (occurrence.bad_lines.empty()) {
      occurrence.first_problem = problem;
      occurrence.first_problem_line = line_number;
    }
    occurrence.last_problem = std::move(problem);
    occurrence.bad_lines.push_back(index);
    line = {};  // keep the line count aligned with the sites without keeping a bad (maybe huge) line
  }
  arena_.append(line);
  arena_.push_back('\n');
  occurrence.end = arena_.size();
}

void Joiner::end_section(bool complete) {
  if (current_ == nullptr) return;
  Occurrence& occurrence = *current_;
  current_ = nullptr;
  const Group& group = groups_[occurrence.group];
  const IndexedSites& sites = *group.sites;
  // A crash can cut the last line of a section it cut short (docs/formats.md section 3): if that line is malformed, it
  // is dropped with a warning rather than reported as bad data.
  if (!complete && !occurrence.bad_lines.empty() && occurrence.bad_lines.back() + 1 == occurrence.line_count &&
      occurrence.line_count <= sites.site_count) {
    sink_.warning(DiagnosticCode::kCutShort, input_name_, occurrence.last_line_number,
                  "last line of a section cut short is incomplete (" + occurrence.last_problem + "); left out");
    occurrence.bad_lines.pop_back();
    --occurrence.line_count;
    arena_.pop_back();  // its empty stand-in's "\n"
    occurrence.end = arena_.size();
  }
  // One message per section for its malformed lines, naming the first (a garbage section is not a flood).
  if (!occurrence.bad_lines.empty()) {
    size_t more = occurrence.bad_lines.size() - 1;
    error(occurrence.first_problem_line,
          occurrence.first_problem + "; site left out" +
              (more == 0 ? std::string()
                         : " (and " + std::to_string(more) + " more malformed " + (more == 1 ? "line" : "lines") +
                               " in this section)"));
  }
  // A section cut short by the end of the input (a crash while writing) is normal: its lines are resolved.
  bool cut_short_ok = !complete && occurrence.line_count <= sites.site_count;
  if (occurrence.line_count != sites.site_count && !cut_short_ok) {
    error(occurrence.tag_line,
          "line count mismatch for " + key_text(group) + ": " + std::to_string(occurrence.line_count) +
              (occurrence.line_count == 1 ? " line" : " lines") + " in this section, " +
              std::to_string(sites.site_count) + (sites.site_count == 1 ? " site" : " sites") + " in " +
              place(sites.label, sites.line) + "; section left out");
    occurrence.usable = false;
    arena_.resize(occurrence.begin);
    occurrence.end = occurrence.begin;
  }
  if (!options_.merge) {
    // Without merging, a section goes out as soon as it is complete; nothing needs to be kept.
    write_group(groups_.back());
    flush_if_full();
    arena_.clear();
    groups_.clear();
    occurrences_.clear();
  }
}

void Joiner::write_row(const Group& group, std::string_view site, std::string_view values) {
  const IndexedSites& sites = *group.sites;
  if (options_.kind == SampleSectionKind::kSamples) {
    // FILE, unit, scheme, static fields, counters (sampler manual, resolveSamples).
    out_ += sites.label;
    out_ += '\t';
    out_ += sites.unit;
    out_ += '\t';
    out_ += sites.scheme;
    out_ += '\t';
    out_ += site;
    out_ += '\t';
    out_ += values;
  } else {
    // timestamp, FILE, unit, scheme, when, static fields (docs/tools.md, resolveTimestamps).
    out_ += values;
    out_ += '\t';
    out_ += sites.label;
    out_ += '\t';
    out_ += sites.unit;
    out_ += '\t';
    out_ += sites.scheme;
    out_ += '\t';
    out_ += group.when;
    out_ += '\t';
    out_ += site;
  }
  out_ += '\n';
  flush_if_full();
}

void Joiner::write_group(const Group& group) {
  size_t usable = 0;
  const Occurrence* only = nullptr;
  for (size_t index : group.occurrences) {
    if (occurrences_[index].usable) {
      ++usable;
      only = &occurrences_[index];
    }
  }
  if (usable == 1) {
    write_single(group, *only);
  } else if (usable > 1) {
    write_merged(group);
  }
}

void Joiner::write_single(const Group& group, const Occurrence& occurrence) {
  std::string_view body = group.sites->body;
  std::string_view lines(arena_.data() + occurrence.begin, occurrence.end - occurrence.begin);
  size_t site_position = 0;
  size_t line_position = 0;
  auto bad = occurrence.bad_lines.begin();
  for (size_t i = 0; i < occurrence.line_count; ++i) {
    std::string_view site = next_line(body, site_position);
    std::string_view values = next_line(lines, line_position);
    if (bad != occurrence.bad_lines.end() && *bad == i) {
      ++bad;
      continue;
    }
    write_row(group, site, values);
  }
}

void Joiner::write_merged(const Group& group) {
  struct Cursor {
    const Occurrence* occurrence;
    std::string_view lines;
    size_t position = 0;
    std::vector<size_t>::const_iterator bad;
  };
  std::vector<Cursor> cursors;
  size_t site_total = 0;
  for (size_t index : group.occurrences) {
    const Occurrence& occurrence = occurrences_[index];
    if (!occurrence.usable) continue;
    cursors.push_back(Cursor{&occurrence,
                             std::string_view(arena_.data() + occurrence.begin, occurrence.end - occurrence.begin),
                             0, occurrence.bad_lines.begin()});
    site_total = std::max(site_total, occurrence.line_count);
  }
  const bool timestamps = options_.kind == SampleSectionKind::kTimestamps;
  const bool first_timestamp = timestamps && group.when == "first";
  const bool bounds = !timestamps && group.scheme_info != nullptr && group.scheme_info->is_bounds;

  // Problems are counted per group and reported once, with the first site that had them.
  size_t unmergeable = 0;
  std::string first_unmergeable;
  size_t overflowed = 0;
  size_t first_overflowed = 0;

  std::string_view body = group.sites->body;
  size_t site_position = 0;
  std::vector<std::string_view> values;
  std::vector<uint64_t> sums;
  std::vector<std::string_view> chosen;
  std::vector<BoundValue> chosen_values;
  std::string merged;
  for (size_t site_index = 0; site_index < site_total; ++site_index) {
    std::string_view site = next_line(body, site_position);
    values.clear();
    bool any_bad = false;
    for (Cursor& cursor : cursors) {
      if (site_index >= cursor.occurrence->line_count) continue;  // a section cut short
      std::string_view line = next_line(cursor.lines, cursor.position);
      if (cursor.bad != cursor.occurrence->bad_lines.end() && *cursor.bad == site_index) {
        ++cursor.bad;
        any_bad = true;  // reported when read; a sum without it would be wrong, so the site is left out
        continue;
      }
      values.push_back(line);
    }
    if (any_bad || values.empty()) continue;

    merged.clear();
    bool site_ok = true;
    if (timestamps) {
      // Earliest non-zero `first`, latest `last` (docs/tools.md); the lines were checked when read.
      std::string_view best = values.front();
      uint64_t best_value = *parse_counter(best);
      for (std::string_view value : values) {
        uint64_t v = *parse_counter(value);
        if (first_timestamp ? (v != 0 && (best_value == 0 || v < best_value)) : v > best_value) {
          best = value;
          best_value = v;
        }
      }
      merged = best;
    } else if (bounds) {
      // min of minima, max of maxima, each printed as its text shows it (docs/formats.md section 3).
      chosen.clear();
      chosen_values.clear();
      split_fields(values.front(), fields_);
      for (std::string_view field : fields_) {
        chosen.push_back(field);
        chosen_values.push_back(*parse_bound_value(field));
      }
      for (size_t v = 1; v < values.size(); ++v) {
        split_fields(values[v], fields_);
        for (size_t f = 0; f < fields_.size() && f < chosen.size(); ++f) {
          BoundValue value = *parse_bound_value(fields_[f]);
          bool take = f % 2 == 0 ? bound_less(value, chosen_values[f]) : bound_less(chosen_values[f], value);
          if (take) {
            chosen[f] = fields_[f];
            chosen_values[f] = value;
          }
        }
      }
      for (size_t f = 0; f < chosen.size(); ++f) {
        if (f != 0) merged += '\t';
        merged += chosen[f];
      }
    } else {
      // Counters are summed in 64 bits. Known schemes were checked when read; an unknown scheme's values are
      // summed too (docs/formats.md section 3), which needs them to be counters with the same number of fields.
      sums.clear();
      for (size_t v = 0; v < values.size() && site_ok; ++v) {
        split_fields(values[v], fields_);
        if (v == 0) {
          sums.assign(fields_.size(), 0);
        } else if (fields_.size() != sums.size()) {
          site_ok = false;
          if (unmergeable++ == 0)
            first_unmergeable = "site " + std::to_string(site_index + 1) + " has " +
                                std::to_string(sums.size()) + " and " + std::to_string(fields_.size()) +
                                " values in different sections";
          break;
        }
        for (size_t f = 0; f < fields_.size(); ++f) {
          auto counter = parse_counter(fields_[f]);
          if (!counter) {
            site_ok = false;
            if (unmergeable++ == 0)
              first_unmergeable = "site " + std::to_string(site_index + 1) + " has " + quote_value(fields_[f]) +
                                  ", which is not a counter";
            break;
          }
          if (__builtin_add_overflow(sums[f], *counter, &sums[f])) {
            site_ok = false;
            if (overflowed++ == 0) first_overflowed = site_index + 1;
            break;
          }
        }
      }
      for (size_t f = 0; site_ok && f < sums.size(); ++f) {
        if (f != 0) merged += '\t';
        merged += std::to_string(sums[f]);
      }
    }
    if (site_ok) write_row(group, site, merged);
  }

  std::string sections = "the sections at lines";
  for (const Cursor& cursor : cursors) sections += " " + std::to_string(cursor.occurrence->tag_line);
  uint64_t first_line = cursors.front().occurrence->tag_line;
  if (unmergeable != 0) {
    error(first_line, "cannot merge " + key_text(group) + " (" + sections + "): " + first_unmergeable +
                          (unmergeable > 1 ? " (and " + std::to_string(unmergeable - 1) + " more sites)" : "") +
                          "; left out");
  }
  if (overflowed != 0) {
    error(first_line, "counter overflow merging " + key_text(group) + " (" + sections + "): site " +
                          std::to_string(first_overflowed) + " sums past 18446744073709551615" +
                          (overflowed > 1 ? " (and " + std::to_string(overflowed - 1) + " more sites)" : "") +
                          "; left out");
  }
}

void Joiner::finish() {
  if (options_.merge) {
    for (const Group& group : groups_) write_group(group);
  }
  flush();
}

}  // namespace

bool resolve_samples(LineReader& input, const SitesIndex& sites, const ResolveOptions& options,
                     const std::function<void(std::string_view)>& write, DiagnosticSink& sink) {
  Joiner joiner(input.name(), sites, options, write, sink);
  bool read_ok = read_samples(input, joiner);
  joiner.finish();
  return read_ok && joiner.ok();
}

}  // namespace sampler
