// The XML tag lines of the text formats (private to the formats library).
//
// Site information and reports are line-oriented: only whole lines that start with '<' can be tags
// (<sites ...>, <report id=...>, <samples ...>, <timestamps ...> and their end tags). A start tag is parsed
// with pugixml, so attribute values are XML attribute values (entities and character references decoded,
// any attribute order, docs/formats.md section 2); body lines are never given to it.
#pragma once

#include <pugixml.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace sampler::xml {

/// True if `line` begins the start tag `<name`: "<", the name, then white space, ">" or "/".
/// Cheap: decides which lines are worth parsing.
bool is_start_tag(std::string_view line, std::string_view name);

/// True if `line` is the end tag `</name>`: XML allows white space before the ">"; white space, "\r" and NUL
/// bytes after it are tolerated too (CRLF files, NUL padding between linked sections).
bool is_end_tag(std::string_view line, std::string_view name);

/// Parses start-tag lines with pugixml. Keeps its buffers between calls, so parsing many tags allocates
/// nothing after the first ones.
class StartTagParser {
 public:
  /// Parses `line` as one element start tag `<name attr="value" ...>` (or an empty-element tag `<name .../>`),
  /// with nothing but white space after it. Returns false and sets `error` if it is not one, or if it is not
  /// well-formed XML where pugixml would let it pass: an attribute given twice, a NUL byte or another control
  /// character, a character reference to a character XML does not allow ("&#x0;"). Errors name the column.
  bool parse(std::string_view line, std::string& error);

  /// The element name of the last successful parse().
  std::string_view name() const { return simple_ ? simple_name_ : std::string_view(element_.name()); }
  /// True if the tag was an empty-element tag (`<name .../>`).
  bool self_closing() const { return self_closing_; }
  /// True if the tag has attribute `attribute`.
  bool has(const char* attribute) const {
    return simple_ ? find(attribute) != nullptr : !element_.attribute(attribute).empty();
  }
  /// The decoded value of `attribute` (empty if absent). Valid until the next parse().
  std::string_view value(const char* attribute) const {
    if (!simple_) return element_.attribute(attribute).value();
    const std::string_view* found = find(attribute);
    return found != nullptr ? *found : std::string_view();
  }

 private:
  // Tags in the plain form writers use (`<name a="v" b="w">`: one space before each attribute, double quotes,
  // values without '&', '<' or control characters) mean exactly their text: they are read without pugixml,
  // which a report's many section tags made costly. Anything else goes to pugixml.
  bool parse_simple(std::string_view line);
  const std::string_view* find(std::string_view attribute) const;

  bool simple_ = false;  // the last tag was read by parse_simple()
  std::string_view simple_name_;
  std::vector<std::pair<std::string_view, std::string_view>> simple_attributes_;  // views into the line
  std::string scratch_;  // the tag, made into a complete element for pugixml (parsed in place)
  pugi::xml_document document_;
  pugi::xml_node element_;
  bool self_closing_ = false;
  std::unordered_set<std::string_view> seen_;  // attribute names of the tag being checked
};

/// `text` made safe to quote in a diagnostic: at most 64 bytes, control and non-ASCII bytes as \xNN.
std::string printable(std::string_view text);

}  // namespace sampler::xml
