// The XML tag lines of the text formats (see xml_tag.h).
#include "xml_tag.h"

#include <cstring>

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

bool StartTagParser::parse(std::string_view line, std::string& error) {
  element_ = pugi::xml_node();
  while (!line.empty() && is_trailer(line.back())) line.remove_suffix(1);
  if (line.size() < 2 || line[0] != '<' || line.back() != '>') {
    error = "malformed tag: it must be one start tag alone on its line";
    return false;
  }
  if (std::memchr(line.data(), '\0', line.size()) != nullptr) {
    error = "malformed tag: it contains a NUL byte";
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
  element_ = first;
  return true;
}

std::string printable(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  constexpr size_t kLimit = 64;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kLimit; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > kLimit) out += "...";
  return out;
}

}  // namespace sampler::xml
