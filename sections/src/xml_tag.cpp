// The XML tag lines of the text formats (see xml_tag.h).
#include "xml_tag.h"

#include <cstring>

#include "checked.h"
#include "sections/core/char_buffer.h"
#include "sections/hex.h"

namespace sampler::xml {

namespace {

bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// White space, "\r" and NUL bytes that may follow a tag on its line.
bool is_trailer(char c) { return is_xml_space(c) || c == '\0'; }

}  // namespace

bool is_start_tag(std::string_view line, std::string_view name) {
  if (line.size() < name.size() + 2 || line[0] != '<' || line.compare(1, name.size(), name) != 0) return false;
  char after = line[name.size() + 1];
  return is_xml_space(after) || after == '>' || after == '/';
}

bool is_end_tag(std::string_view line, std::string_view name) {
  if (line.size() < name.size() + 3 || line[0] != '<' || line[1] != '/' ||
      line.compare(2, name.size(), name) != 0) {
    return false;
  }
  size_t at = name.size() + 2;
  while (at < line.size() && is_xml_space(line[at])) ++at;
  if (at == line.size() || line[at] != '>') return false;
  for (++at; at < line.size(); ++at) {
    if (!is_trailer(line[at])) return false;
  }
  return true;
}

namespace {

/// XML 1.0 production [2] Char: what a character reference may name.
bool is_xml_char(uint32_t c) {
  return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) ||
         (c >= 0x10000 && c <= 0x10ffff);
}

/// The first problem pugixml does not see in a tag line, or "": a NUL byte or another control character (XML
/// allows only tab, LF and CR), or a character reference to a character XML does not allow ("&#x0;", which pugixml
/// decodes into a NUL that ends the value early). Columns are 1-based.
std::string check_characters(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c == 0) return "malformed tag: it contains a NUL byte at column " + std::to_string(i + 1);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      return std::string("malformed tag: control character \\x") + kHexDigits[c >> 4] + kHexDigits[c & 15] + " at column " +
             std::to_string(i + 1);
    }
    if (c != '&' || i + 2 >= line.size() || line[i + 1] != '#') continue;
    // &#DIGITS; or &#xHEX; (XML production [66]); a malformed reference is pugixml's to report.
    const bool hex = line[i + 2] == 'x';
    const size_t digits_start = i + (hex ? 3 : 2);
    size_t at = digits_start;
    while (at < line.size() && (hex ? hex_digit_value(line[at]) >= 0 : line[at] >= '0' && line[at] <= '9')) {
      ++at;
    }
    if (at == line.size() || line[at] != ';') continue;
    const checked::Digits digits = checked::parse_digits(line.substr(digits_start, at - digits_start), hex ? 16 : 10);
    if (digits.status == checked::Digits::Status::kEmpty) continue;
    const uint64_t value = digits.status == checked::Digits::Status::kOk ? digits.value : UINT64_MAX;  // overflow
    if (value > 0x10ffff || !is_xml_char(static_cast<uint32_t>(value))) {
      return "malformed tag: character reference '" + std::string(line.substr(i, at + 1 - i)) + "' at column " +
             std::to_string(i + 1) + " names a character XML does not allow";
    }
  }
  return "";
}

}  // namespace

namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }
// A byte an attribute value may hold in the plain form: printable ASCII but '"', '&' and '<'.
bool is_plain_value(char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '&' && c != '<'; }

}  // namespace

const std::string_view* StartTagParser::find(std::string_view attribute) const {
  for (const auto& [name, value] : simple_attributes_) {
    if (name == attribute) return &value;
  }
  return nullptr;
}

bool StartTagParser::parse_simple(std::string_view line) {
  // `line` has no trailers, starts with '<' and ends with '>'.
  size_t end = line.size() - 1;  // the '>'
  bool closing = line[end - 1] == '/';
  if (closing) --end;
  size_t at = 1;
  if (at >= end || !is_name_start(line[at])) return false;
  while (at < end && is_name_char(line[at])) ++at;
  simple_name_ = line.substr(1, at - 1);
  simple_attributes_.clear();
  while (at < end) {
    if (line[at] != ' ') return false;
    if (++at == end) break;  // one space before the '>' or "/>"
    size_t name_start = at;
    if (!is_name_start(line[at])) return false;
    while (at < end && is_name_char(line[at])) ++at;
    std::string_view name = line.substr(name_start, at - name_start);
    if (end - at < 2 || line[at] != '=' || line[at + 1] != '"') return false;
    at += 2;
    size_t value_start = at;
    while (at < end && is_plain_value(line[at])) ++at;
    if (at == end || line[at] != '"') return false;
    if (find(name) != nullptr) return false;  // twice: pugixml's path names the error
    simple_attributes_.emplace_back(name, line.substr(value_start, at - value_start));
    ++at;
  }
  self_closing_ = closing;
  return true;
}

bool StartTagParser::parse(std::string_view line, std::string& error) {
  element_ = pugi::xml_node();
  simple_ = false;
  while (!line.empty() && is_trailer(line.back())) line.remove_suffix(1);
  if (line.size() >= 3 && line[0] == '<' && line.back() == '>') {
    scratch_.assign(line);  // the views must outlive the caller's line
    if (parse_simple(scratch_)) {
      simple_ = true;
      return true;
    }
  }
  if (line.size() < 2 || line[0] != '<' || line.back() != '>') {
    error = "malformed tag: it must be one start tag alone on its line";
    return false;
  }
  if (std::string problem = check_characters(line); !problem.empty()) {
    error = std::move(problem);
    return false;
  }
  // A start tag alone is not a well-formed XML document: make it an empty-element tag for pugixml.
  self_closing_ = line.size() >= 3 && line[line.size() - 2] == '/';
  scratch_.assign(line);
  if (!self_closing_) scratch_.insert(scratch_.size() - 1, 1, '/');
  pugi::xml_parse_result result =
      document_.load_buffer_inplace(scratch_.data(), scratch_.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!result) {
    error = std::string("malformed tag: ") + result.description() + " at column " +
            std::to_string(result.offset + 1);
    return false;
  }
  pugi::xml_node first = document_.first_child();
  if (first.type() != pugi::node_element || first.next_sibling() || first.first_child()) {
    error = "malformed tag: it must be one start tag alone on its line";
    return false;
  }
  // XML forbids an attribute twice in one tag (well-formedness constraint "Unique Att Spec"); pugixml keeps both
  // and answers with the first, so "scheme="a" scheme="b"" would silently mean "a".
  seen_.clear();
  for (pugi::xml_attribute attribute : first.attributes()) {
    std::string_view name = attribute.name();
    if (seen_.insert(name).second) continue;
    // Parsed in place: the name points into scratch_, whose bytes up to the inserted '/' are the line's.
    const char* at = attribute.name();
    std::string where;
    if (at >= scratch_.data() && at < scratch_.data() + scratch_.size()) {
      where = " at column " + std::to_string(at - scratch_.data() + 1);
    }
    error = "malformed tag: duplicate attribute '" + std::string(name) + "'" + where;
    return false;
  }
  element_ = first;
  return true;
}

std::string printable(std::string_view text) {
  constexpr size_t kLimit = 64;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kLimit; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHexDigits[c >> 4];
      out += kHexDigits[c & 15];
    }
  }
  if (text.size() > kLimit) out += "...";
  return out;
}

}  // namespace sampler::xml
