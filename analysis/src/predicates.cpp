// Predicates of a site in words (analysis/predicates.h).
#include "analysis/predicates.h"

#include <array>
#include <optional>

#include "sections/scheme_table.h"

namespace sampler::analysis {

namespace {

// The predicates of a kSixRelations scheme, in their order (predicates.h).
constexpr std::array<std::string_view, 6> kRelations = {"<", "<=", ">", ">=", "==", "!="};

std::vector<std::string_view> split(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, end - start));
    start = end + separator.size();
  }
}

// The table's words for predicate `index` of `site` (sections/scheme_table.h), or nothing where it has none.
std::optional<std::string> table_text(const Site& site, uint32_t index) {
  SchemeId id{};
  if (!find_scheme_id(site.scheme, id) || scheme_row(id).predicate.empty()) return std::nullopt;
  const SchemeRow& row = scheme_row(id);
  std::string_view label = scheme_label(row.labels, index);
  std::string_view relation = index < kRelations.size() ? kRelations[index] : std::string_view();
  auto field = [&](size_t i) -> std::string { return i < site.fields.size() ? site.fields[i] : std::string("?"); };
  std::string text;
  for (size_t i = 0; i < row.predicate.size(); ++i) {
    char c = row.predicate[i];
    if (c != '%' || i + 1 == row.predicate.size()) {
      text += c;
      continue;
    }
    char what = row.predicate[++i];
    if (what >= '0' && what <= '9') {
      text += field(static_cast<size_t>(what - '0'));
    } else if (what == 'F') {
      text += site.function;
    } else if (what == 'L' || what == 'R') {
      std::string_view word = what == 'L' ? label : relation;
      if (word.empty()) return std::nullopt;
      text += word;
    }
  }
  return text;
}

}  // namespace

SchemeKind scheme_kind(std::string_view scheme) {
  SchemeId id{};
  return find_scheme_id(scheme, id) ? scheme_row(id).predicates : SchemeKind::kPerCounter;
}

void parse_site_fields(std::string_view line, Site& site) {
  std::vector<std::string_view> parts = split(line, "\t");
  std::string* common[] = {&site.file, &site.line, &site.function, &site.node};
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i < 4) {
      common[i]->assign(parts[i]);
    } else {
      site.fields.emplace_back(parts[i]);
    }
  }
}

std::string predicate_text(const Site& site, uint32_t index) {
  if (std::optional<std::string> text = table_text(site, index)) return *std::move(text);
  // A program's own scheme may name its columns in a field "NAME: label, label, ...".
  for (const std::string& text : site.fields) {
    std::vector<std::string_view> name_labels = split(text, ": ");
    if (name_labels.size() != 2) continue;
    std::vector<std::string_view> labels = split(name_labels[1], ", ");
    if (labels.size() == site.counters && index < labels.size()) {
      return std::string(name_labels[0]) + " " + std::string(labels[index]);
    }
  }
  return site.scheme + " column " + std::to_string(index);
}

}  // namespace sampler::analysis
