// Static site information: the scheme table and the .sites parser (see sections/site_info.h).
//
// The parser walks the text once. Inside a section it does not look at site lines one by one: it jumps from
// one line starting with '<' to the next (the only candidates for </sites>) and counts the newlines between
// them in bulk, so a section costs about as much as `wc -l` over it. Site lines are never copied.
#include "sections/site_info.h"

#include "sections/scheme_table.h"

#include <array>
#include <cstring>

#include "error_limit.h"
#include "text_scan.h"
#include "xml_tag.h"

namespace sampler {

namespace {

// docs/formats.md section 2: the fields each known scheme adds after the 4 common ones, and its counters per site in
// a samples section, from the one table (sections/scheme_table.h), sorted by name for find_scheme().
constexpr std::array<SchemeInfo, kSchemeCount> sorted_schemes() {
  std::array<SchemeInfo, kSchemeCount> schemes{};
  for (size_t i = 0; i < kSchemeCount; ++i) {
    const SchemeRow& row = kSchemeTable[i];
    SchemeInfo info{row.name, row.static_fields, row.counters, row.predicates == PredicateKind::kBounds};
    size_t at = i;  // insertion sort: ten rows, at compile time
    for (; at > 0 && info.name < schemes[at - 1].name; --at) schemes[at] = schemes[at - 1];
    schemes[at] = info;
  }
  return schemes;
}
constexpr std::array<SchemeInfo, kSchemeCount> kSchemes = sorted_schemes();

// Between sections: NUL padding from the linker (docs/formats.md section 2) and blank lines.
bool is_padding(char c) { return c == '\0' || c == '\n' || c == '\r' || c == ' ' || c == '\t'; }

}  // namespace

const SchemeInfo* find_scheme(std::string_view name) {
  for (const SchemeInfo& scheme : kSchemes) {
    if (scheme.name == name) return &scheme;
  }
  return nullptr;
}

std::span<const SchemeInfo> known_schemes() { return kSchemes; }

bool is_unit_signature(std::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool parse_site_info(std::string_view text, std::string_view source_name,
                     const std::function<void(const SitesSection&)>& on_section, DiagnosticSink& sink) {
  LimitedDiagnostics diagnostics(sink, std::string(source_name));
  xml::StartTagParser tags;
  std::string error;

  enum class State {
    kOutside,      // between sections
    kJunk,         // after text outside a section (reported once): waiting for the next start tag
    kSection,      // inside a well-formed section
    kBadSection,   // inside a section whose start tag was rejected: waiting for its end
  };
  State state = State::kOutside;
  SitesSection section;
  size_t body_start = 0;

  const char* data = text.data();
  const size_t size = text.size();
  size_t pos = 0;     // always at the start of a line (or inside padding between sections)
  uint64_t line = 1;  // number of the line at `pos`

  while (pos < size) {
    if (state == State::kOutside) {
      while (pos < size && is_padding(data[pos])) {
        if (data[pos] == '\n') ++line;
        ++pos;
      }
      if (pos == size) break;
    } else {
      // Only a line starting with '<' can end this state: skip the others in bulk.
      size_t tag = text::find_line_starting_with(text, pos, '<');
      line += text::count_newlines(data + pos, tag - pos);
      pos = tag;
      if (pos == size) break;
    }
    const void* newline = std::memchr(data + pos, '\n', size - pos);
    size_t eol = newline != nullptr ? static_cast<size_t>(static_cast<const char*>(newline) - data) : size;
    std::string_view current = text.substr(pos, eol - pos);

    if (xml::is_start_tag(current, "sites")) {
      if (state == State::kSection) {
        diagnostics.error(section.line, "<sites> section has no closing tag (the next one starts at line " +
                                            std::to_string(line) + ")");
      }
      state = State::kBadSection;
      if (!tags.parse(current, error)) {
        diagnostics.error(line, error);
      } else if (!tags.has("unit")) {
        diagnostics.error(line, "<sites> tag has no unit attribute");
      } else if (!tags.has("scheme")) {
        diagnostics.error(line, "<sites> tag has no scheme attribute");
      } else if (!is_unit_signature(tags.value("unit"))) {
        diagnostics.error(line, "unit \"" + xml::printable(tags.value("unit")) +
                                    "\" is not 32 lower-case hexadecimal digits");
      } else if (tags.value("scheme").empty()) {
        diagnostics.error(line, "<sites> tag has an empty scheme attribute");
      } else {
        section.unit.assign(tags.value("unit"));
        section.scheme.assign(tags.value("scheme"));
        section.line = line;
        body_start = eol < size ? eol + 1 : size;
        state = State::kSection;
        if (tags.self_closing()) {  // <sites .../>: a section without sites
          section.body = std::string_view();
          section.site_count = 0;
          on_section(section);
          state = State::kOutside;
        }
      }
    } else if (xml::is_end_tag(current, "sites")) {
      if (state == State::kSection) {
        section.body = text.substr(body_start, pos - body_start);
        section.site_count = static_cast<size_t>(line - section.line - 1);
        on_section(section);
      } else if (state != State::kBadSection) {
        diagnostics.error(line, "</sites> without a matching <sites> tag");
      }
      state = State::kOutside;
    } else if (state == State::kOutside) {
      diagnostics.error(line, "text outside a <sites> section (ignored up to the next <sites> tag)");
      state = State::kJunk;
    }
    // Otherwise: a site line that happens to start with '<' (a file named "<built-in>"), or more junk.

    if (eol == size) {
      pos = size;
    } else {
      pos = eol + 1;
      ++line;
    }
  }
  if (state == State::kSection) {
    uint64_t last_line = size > 0 && data[size - 1] == '\n' ? line - 1 : line;
    diagnostics.error(section.line, "<sites> section has no closing tag (the input ends at line " +
                                        std::to_string(last_line) + ")");
  }
  return diagnostics.errors() == 0;
}

}  // namespace sampler
