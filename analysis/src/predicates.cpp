// Predicates of a site in words (analysis/predicates.h).
#include "analysis/predicates.h"

#include <array>

namespace sampler::analysis {

namespace {

// Counter labels of the schemes docs/formats.md section 2 names (the same words scripts/demo.sh used to print).
constexpr std::array<std::string_view, 6> kRelations = {"<", "<=", ">", ">=", "==", "!="};
constexpr std::array<std::string_view, 9> kFloatKinds = {"-inf",   "negative normal",   "negative subnormal",
                                                         "-0",     "NaN",               "+0",
                                                         "positive subnormal", "positive normal", "+inf"};
constexpr std::array<std::string_view, 2> kAtoms = {"accessed by the same thread", "accessed by another thread"};
constexpr std::array<std::string_view, 4> kUnref = {"refcount 0", "refcount 1", "refcount > 1", "not a GObject"};

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

}  // namespace

SchemeKind scheme_kind(std::string_view scheme) {
  if (scheme == "bounds") return SchemeKind::kBounds;
  if (scheme == "returns" || scheme == "scalar-pairs") return SchemeKind::kSixRelations;
  return SchemeKind::kPerCounter;
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
  auto field = [&](size_t i) -> std::string { return i < site.fields.size() ? site.fields[i] : std::string("?"); };
  const std::string& scheme = site.scheme;
  if (scheme == "branches") return "(" + field(0) + ") is " + (index == 0 ? "false" : "true");
  if (scheme == "returns" && index < kRelations.size()) {
    return field(0) + "() " + std::string(kRelations[index]) + " 0";
  }
  if (scheme == "scalar-pairs" && index < kRelations.size()) {
    return field(0) + " " + std::string(kRelations[index]) + " " + field(3);
  }
  if (scheme == "float-kinds" && index < kFloatKinds.size()) return field(0) + " is " + std::string(kFloatKinds[index]);
  if (scheme == "function-entries") return site.function + "() reached";
  if (scheme == "coverage" || scheme == "data") return "reached";
  if (scheme == "atoms" && index < kAtoms.size()) return field(0) + " " + std::string(kAtoms[index]);
  if (scheme == "g-object-unref" && index < kUnref.size()) return field(0) + " " + std::string(kUnref[index]);
  // A program's own scheme may name its columns in a field "NAME: label, label, ...".
  for (const std::string& text : site.fields) {
    std::vector<std::string_view> name_labels = split(text, ": ");
    if (name_labels.size() != 2) continue;
    std::vector<std::string_view> labels = split(name_labels[1], ", ");
    if (labels.size() == site.counters && index < labels.size()) {
      return std::string(name_labels[0]) + " " + std::string(labels[index]);
    }
  }
  return scheme + " column " + std::to_string(index);
}

}  // namespace sampler::analysis
