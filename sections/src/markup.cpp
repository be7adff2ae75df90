// Symbolizer markup reader (see sections/markup.h; LLVM's Symbolizer Markup Format). What it accepts follows
// llvm-symbolizer's MarkupFilter (llvm/lib/DebugInfo/Symbolize/MarkupFilter.cpp), field by field: docs/decisions.md.
#include "sections/markup.h"

#include <algorithm>
#include <cstring>

#include "checked.h"
#include "sections/hex.h"

namespace sampler::markup {
namespace {

constexpr size_t npos = std::string_view::npos;

bool is_tag_char(char c) { return c >= 'a' && c <= 'z'; }

/// Parses the digits of a field in `base` (after a prefix of `skip` characters); errors carry offsets in the field.
bool parse_field_digits(std::string_view digits, int base, size_t skip, uint64_t& value, const char*& error,
                        size_t& error_offset) {
  const checked::Digits parsed = checked::parse_digits(digits, base);
  switch (parsed.status) {
    case checked::Digits::Status::kOk:
      value = parsed.value;
      return true;
    case checked::Digits::Status::kEmpty:
      error = base == 16 ? "no hex digits after 0x" : base == 2 ? "no binary digits after 0b" : "no digits";
      error_offset = skip;
      return false;
    case checked::Digits::Status::kBadDigit:
      error = base == 16 ? "not a hex digit"
              : base == 8 ? "not an octal digit"
              : base == 2 ? "not a binary digit"
                          : "not a decimal digit";
      error_offset = skip + parsed.offset;
      return false;
    case checked::Digits::Status::kOverflow:
      error = "value does not fit in 64 bits";
      error_offset = skip;
      return false;
  }
  return false;
}

/// Fills `error` for a field problem: "TAG: bad WHAT: PROBLEM" at the field's column plus the offset.
bool field_error(const Node& node, size_t index, const char* what, const char* problem, size_t offset,
                 ParseError& error) {
  error.message = std::string(node.tag) + ": bad " + what + ": " + problem;
  error.column = node.field_column(index) + offset;
  return false;
}

bool element_error(const Node& node, size_t column, std::string message, ParseError& error) {
  error.message = std::string(node.tag) + ": " + std::move(message);
  error.column = column;
  return false;
}

/// Checks the tag and that there are at least `least` fields (more are ignored, as llvm-symbolizer ignores them).
bool check_shape(const Node& node, std::string_view tag, size_t least, const char* expected, ParseError& error) {
  if (!node.is_element() || node.tag != tag) {
    error.message = "expected a " + std::string(tag) + " element";
    error.column = node.column;
    return false;
  }
  size_t count = node.fields.size();
  if (count < least) {
    return element_error(node, node.column,
                         std::string("expected ") + expected + ", found " + std::to_string(count) +
                             (count == 1 ? " field" : " fields"),
                         error);
  }
  return true;
}

/// The pc/ra suffix: read only when it is field `index` and the last one (llvm-symbolizer's reading).
bool parse_kind(const Node& node, size_t index, CodeKind& kind, ParseError& error) {
  kind = CodeKind::kUnknown;
  if (node.fields.size() != index + 1) return true;
  std::string_view field = node.fields[index];
  if (field == "pc") {
    kind = CodeKind::kPc;
  } else if (field == "ra") {
    kind = CodeKind::kRa;
  } else {
    return element_error(node, node.field_column(index), "expected \"pc\" or \"ra\" after the address", error);
  }
  return true;
}

}  // namespace

// ------------------------------------------------------------------------------------------------ tokenizer

size_t sgr_length(std::string_view text) {
  // Symbolizer Markup Format, "Colorization": "\033[%um" with %u one of 0, 1, 30-37.
  if (text.size() < 4 || text[0] != '\033' || text[1] != '[') return 0;
  if ((text[2] == '0' || text[2] == '1') && text[3] == 'm') return 4;
  if (text.size() >= 5 && text[2] == '3' && text[3] >= '0' && text[3] <= '7' && text[4] == 'm') return 5;
  return 0;
}

Tokenizer::Tokenizer(std::string_view line, size_t begin, size_t end)
    : line_(line), end_(std::min(end, line.size())), position_(std::min(begin, end_)) {}

size_t Tokenizer::find_close(size_t from) {
  // The first "}}}" at or after an earlier position is also the first at or after any later position up to it,
  // so each part of the line is searched once.
  if (cached_close_ != npos && cached_close_ >= from) return cached_close_;
  if (close_exhausted_) return npos;
  cached_close_ = from < end_ ? line_.substr(0, end_).find("}}}", from) : npos;
  if (cached_close_ == npos) close_exhausted_ = true;
  return cached_close_;
}

Tokenizer::Span Tokenizer::find_element(size_t from) {
  const std::string_view line = line_.substr(0, end_);
  size_t search = from;
  while (search < end_) {
    size_t open = line.find("{{{", search);
    if (open == npos) break;
    size_t tag_end = open + 3;
    while (tag_end < end_ && is_tag_char(line[tag_end])) ++tag_end;
    if (tag_end > open + 3) {
      if (line.substr(tag_end, 3) == "}}}") return Span{open, tag_end, tag_end + 3};
      if (tag_end < end_ && line[tag_end] == ':') {
        size_t close = find_close(tag_end + 1);
        // Any later element would need a "}}}" after this one's tag: none exists.
        if (close == npos) break;
        return Span{open, tag_end, close + 3};
      }
    }
    // Not an element here (the "{{{" is text); an element may start inside it, e.g. "{{{{pc:..}}}".
    search = open + 1;
  }
  return Span{npos, 0, 0};
}

bool Tokenizer::next(Node& node) {
  if (position_ >= end_) return false;
  if (!have_pending_ || (pending_.start != npos && pending_.start < position_)) {
    pending_ = find_element(position_);
    have_pending_ = true;
  }
  node.line = line_;
  node.fields.clear();
  node.tag = {};
  node.column = position_;
  if (pending_.start != position_) {
    // Text up to the next element, with the SGR sequences in it as nodes of their own (markup format, "Colorization").
    const size_t end = pending_.start == npos ? end_ : pending_.start;
    size_t sgr = position_;
    size_t length = 0;
    for (;;) {
      const void* escape = std::memchr(line_.data() + sgr, '\033', end - sgr);
      if (escape == nullptr) {
        sgr = end;
        break;
      }
      sgr = static_cast<size_t>(static_cast<const char*>(escape) - line_.data());
      length = sgr_length(line_.substr(sgr, end - sgr));
      if (length != 0) break;
      ++sgr;
    }
    if (sgr == position_) {
      node.kind = Node::Kind::kSgr;
      node.text = line_.substr(position_, length);
      position_ += length;
      return true;
    }
    node.kind = Node::Kind::kText;
    node.text = line_.substr(position_, sgr - position_);
    position_ = sgr;
    return true;
  }
  node.kind = Node::Kind::kElement;
  node.text = line_.substr(pending_.start, pending_.end - pending_.start);
  node.tag = line_.substr(pending_.start + 3, pending_.tag_end - pending_.start - 3);
  if (line_[pending_.tag_end] == ':') {
    // Fields: everything up to "}}}", split at every ':' (Symbolizer Markup Format: fields cannot contain ':').
    size_t field_start = pending_.tag_end + 1;
    size_t content_end = pending_.end - 3;
    for (;;) {
      size_t colon = line_.find(':', field_start);
      if (colon == npos || colon > content_end) colon = content_end;
      node.fields.push_back(line_.substr(field_start, colon - field_start));
      if (colon == content_end) break;
      field_start = colon + 1;
    }
  }
  position_ = pending_.end;
  have_pending_ = false;
  return true;
}

std::vector<Node> tokenize(std::string_view line) {
  std::vector<Node> nodes;
  Tokenizer tokenizer(line);
  Node node;
  while (tokenizer.next(node)) nodes.push_back(node);
  return nodes;
}

std::optional<Node> sole_element(std::string_view line) {
  Tokenizer tokenizer(line);
  Node node;
  std::optional<Node> element;
  while (tokenizer.next(node)) {
    if (node.is_element()) {
      if (element) return std::nullopt;
      element = node;
    } else if (node.kind == Node::Kind::kText && node.text.find_first_not_of(" \t\r\v\f") != npos) {
      return std::nullopt;
    }
  }
  return element;
}

bool is_contextual_tag(std::string_view tag) { return tag == "reset" || tag == "module" || tag == "mmap"; }

// ------------------------------------------------------------------------------------------- multi-line parser

MarkupParser::MarkupParser(std::vector<std::string> multiline_tags) : multiline_tags_(std::move(multiline_tags)) {}

void MarkupParser::begin_line(std::string_view line) {
  line_ = line;
  finished_.clear();
  element_ready_ = false;
  started_inside_ = !open_.empty();
  size_t begin = 0;
  if (started_inside_) {
    const size_t close = line.find("}}}");
    open_ += '\n';
    if (close == npos) {
      open_ += line;  // the whole line belongs to the element
      tokenizer_ = Tokenizer(line, line.size(), line.size());
      return;
    }
    open_ += line.substr(0, close + 3);
    finished_.swap(open_);
    open_.clear();
    element_ready_ = true;
    begin = close + 3;
  }
  // llvm-symbolizer's rule: after the last complete element, the line opens a multi-line element if it ends with
  // "{{{TAG:" (TAG registered) and no "}}}" follows. Complete elements all end before that "{{{".
  size_t end = line.size();
  const size_t opening = line.rfind("{{{");
  if (opening != npos && opening >= begin && line.find("}}}", opening + 3) == npos) {
    const size_t colon = line.find(':', opening + 3);
    if (colon != npos) {
      const std::string_view tag = line.substr(opening + 3, colon - opening - 3);
      if (std::find(multiline_tags_.begin(), multiline_tags_.end(), tag) != multiline_tags_.end()) {
        open_.assign(line.substr(opening));
        end = opening;
      }
    }
  }
  tokenizer_ = Tokenizer(line, begin, end);
}

bool MarkupParser::next(Node& node) {
  if (element_ready_) {
    element_ready_ = false;
    Tokenizer whole(finished_);
    if (whole.next(node) && node.is_element()) return true;
    // Not an element after all (its tag is not one): the joined text is text, as llvm-symbolizer shows it.
    node = Node{};
    node.line = finished_;
    node.text = finished_;
  }
  return tokenizer_.next(node);
}

bool MarkupParser::finish(Node& node) {
  if (open_.empty()) return false;
  finished_.swap(open_);
  open_.clear();
  node = Node{};
  node.line = finished_;
  node.text = finished_;
  return true;
}

void MarkupParser::reset() {
  open_.clear();
  finished_.clear();
  element_ready_ = false;
  started_inside_ = false;
  tokenizer_ = Tokenizer(std::string_view());
}

// --------------------------------------------------------------------------------------------------- fields

bool parse_integer_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset) {
  if (field.empty()) {
    error = "empty field";
    error_offset = 0;
    return false;
  }
  // llvm-symbolizer reads %i with StringRef::getAsInteger(0): its radix from the prefix.
  if (field.size() >= 2 && field[0] == '0') {
    const char prefix = field[1];
    if (prefix == 'x' || prefix == 'X') return parse_field_digits(field.substr(2), 16, 2, value, error, error_offset);
    if (prefix == 'b' || prefix == 'B') return parse_field_digits(field.substr(2), 2, 2, value, error, error_offset);
    if (prefix == 'o') return parse_field_digits(field.substr(2), 8, 2, value, error, error_offset);
    if (prefix >= '0' && prefix <= '9') return parse_field_digits(field.substr(1), 8, 1, value, error, error_offset);
  }
  return parse_field_digits(field, 10, 0, value, error, error_offset);
}

bool parse_decimal_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset) {
  if (field.empty()) {
    error = "empty field";
    error_offset = 0;
    return false;
  }
  return parse_field_digits(field, 10, 0, value, error, error_offset);
}

bool parse_address_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset) {
  if (field.empty()) {
    error = "empty field";
    error_offset = 0;
    return false;
  }
  // Symbolizer Markup Format, %p: "If the digits are all 0 then the 0x prefix may be omitted."
  if (field.find_first_not_of('0') == npos) {
    value = 0;
    return true;
  }
  if (field.size() < 2 || field[0] != '0' || field[1] != 'x') {
    error = "expected 0x and hex digits";
    error_offset = 0;
    return false;
  }
  // The Symbolizer Markup Format asks writers for an even number of digits, at most 16; llvm-symbolizer reads any
  // number (leading zeros included) as long as the value fits in 64 bits, and so does this reader.
  return parse_field_digits(field.substr(2), 16, 2, value, error, error_offset);
}

bool parse_hex_bytes_field(std::string_view field, std::vector<uint8_t>& bytes, const char*& error,
                           size_t& error_offset) {
  if (field.empty()) {
    error = "empty field";
    error_offset = 0;
    return false;
  }
  for (size_t i = 0; i < field.size(); ++i) {
    if (hex_digit_value(field[i]) < 0) {
      error = "not a hex digit";
      error_offset = i;
      return false;
    }
  }
  // An odd number of digits reads as if a "0" came first, as llvm::object::parseBuildID reads it.
  bytes.reserve(bytes.size() + (field.size() + 1) / 2);
  size_t i = 0;
  if (field.size() % 2 != 0) bytes.push_back(static_cast<uint8_t>(hex_digit_value(field[i++])));
  for (; i < field.size(); i += 2) {
    bytes.push_back(
        static_cast<uint8_t>(hex_digit_value(field[i]) * 16 + hex_digit_value(field[i + 1])));
  }
  return true;
}

// ------------------------------------------------------------------------------------------------- elements

bool parse_reset(const Node& node, ParseError& error) { return check_shape(node, "reset", 0, "no fields", error); }

bool parse_module(const Node& node, ModuleElement& out, ParseError& error) {
  if (!check_shape(node, "module", 3, "ID, name, type and type fields", error)) return false;
  const char* problem = nullptr;
  size_t offset = 0;
  if (!parse_integer_field(node.fields[0], out.id, problem, offset)) {
    return field_error(node, 0, "ID", problem, offset, error);
  }
  // The markup format asks for printable characters; llvm-symbolizer takes the name as it is (it is only shown).
  out.name = node.fields[1];
  out.type = node.fields[2];
  if (out.type != "elf") return element_error(node, node.field_column(2), "unsupported module type", error);
  if (!check_shape(node, "module", 4, "4 fields (ID, name, elf, build ID)", error)) return false;
  out.build_id.clear();
  if (!parse_hex_bytes_field(node.fields[3], out.build_id, problem, offset)) {
    return field_error(node, 3, "build ID", problem, offset, error);
  }
  return true;
}

bool parse_mmap(const Node& node, MmapElement& out, ParseError& error) {
  if (!check_shape(node, "mmap", 3, "start, size, type and type fields", error)) return false;
  const char* problem = nullptr;
  size_t offset = 0;
  if (!parse_address_field(node.fields[0], out.start, problem, offset)) {
    return field_error(node, 0, "start address", problem, offset, error);
  }
  if (!parse_integer_field(node.fields[1], out.size, problem, offset)) {
    return field_error(node, 1, "size", problem, offset, error);
  }
  out.type = node.fields[2];
  if (out.type != "load") return element_error(node, node.field_column(2), "unsupported mmap type", error);
  if (!check_shape(node, "mmap", 6, "6 fields (start, size, load, module, flags, address)", error)) return false;
  if (!parse_integer_field(node.fields[3], out.module_id, problem, offset)) {
    return field_error(node, 3, "module ID", problem, offset, error);
  }
  // Flags: one or more of r, w, x, in that order, either case (Symbolizer Markup Format, "mmap ... load").
  std::string_view flags = node.fields[4];
  out.readable = out.writable = out.executable = false;
  if (flags.empty()) return field_error(node, 4, "flags", "empty field", 0, error);
  int last = -1;
  for (size_t i = 0; i < flags.size(); ++i) {
    char c = static_cast<char>(flags[i] | 0x20);  // lower case; other characters stay invalid
    int rank = c == 'r' ? 0 : c == 'w' ? 1 : c == 'x' ? 2 : -1;
    if (rank < 0) return field_error(node, 4, "flags", "expected r, w or x", i, error);
    if (rank <= last) {
      return field_error(node, 4, "flags", "r, w and x must appear at most once, in that order", i, error);
    }
    last = rank;
    (rank == 0 ? out.readable : rank == 1 ? out.writable : out.executable) = true;
  }
  if (!parse_address_field(node.fields[5], out.module_relative_address, problem, offset)) {
    return field_error(node, 5, "module-relative address", problem, offset, error);
  }
  return true;
}

bool parse_bt(const Node& node, BtElement& out, ParseError& error) {
  if (!check_shape(node, "bt", 2, "2 or 3 fields (frame, address, pc or ra)", error)) return false;
  const char* problem = nullptr;
  size_t offset = 0;
  if (!parse_decimal_field(node.fields[0], out.frame, problem, offset)) {
    return field_error(node, 0, "frame number", problem, offset, error);
  }
  if (!parse_address_field(node.fields[1], out.address, problem, offset)) {
    return field_error(node, 1, "address", problem, offset, error);
  }
  return parse_kind(node, 2, out.kind, error);
}

bool parse_pc(const Node& node, PcElement& out, ParseError& error) {
  if (!check_shape(node, "pc", 1, "1 or 2 fields (address, pc or ra)", error)) return false;
  const char* problem = nullptr;
  size_t offset = 0;
  if (!parse_address_field(node.fields[0], out.address, problem, offset)) {
    return field_error(node, 0, "address", problem, offset, error);
  }
  return parse_kind(node, 1, out.kind, error);
}

}  // namespace sampler::markup
