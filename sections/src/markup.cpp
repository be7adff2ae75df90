// Symbolizer markup reader (see sections/markup.h; shared/seeds/000).
#include "sections/markup.h"

namespace sampler::markup {
namespace {

constexpr size_t npos = std::string_view::npos;

bool is_tag_char(char c) { return c >= 'a' && c <= 'z'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Accumulates digits of `base` from `digits`; offsets in errors are relative to `digits` plus `skip`.
bool parse_digits(std::string_view digits, unsigned base, size_t skip, uint64_t& value, const char*& error,
                  size_t& error_offset) {
  value = 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    int digit = hex_value(digits[i]);
    if (digit < 0 || static_cast<unsigned>(digit) >= base) {
      error = base == 16 ? "not a hex digit" : base == 8 ? "not an octal digit" : "not a decimal digit";
      error_offset = skip + i;
      return false;
    }
    if (value > (UINT64_MAX - static_cast<unsigned>(digit)) / base) {
      error = "value does not fit in 64 bits";
      error_offset = skip + i;
      return false;
    }
    value = value * base + static_cast<unsigned>(digit);
  }
  return true;
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

/// Checks the tag and that the field count is within [least, most].
bool check_shape(const Node& node, std::string_view tag, size_t least, size_t most, const char* expected,
                 ParseError& error) {
  if (!node.is_element() || node.tag != tag) {
    error.message = "expected a " + std::string(tag) + " element";
    error.column = node.column;
    return false;
  }
  size_t count = node.fields.size();
  if (count < least || count > most) {
    // Too many: point at the first extra field; too few: at the element.
    size_t column = count > most ? node.field_column(most) : node.column;
    return element_error(node, column,
                         std::string("expected ") + expected + ", found " + std::to_string(count) +
                             (count == 1 ? " field" : " fields"),
                         error);
  }
  return true;
}

bool parse_kind(const Node& node, size_t index, CodeKind& kind, ParseError& error) {
  if (index >= node.fields.size()) {
    kind = CodeKind::kUnknown;
    return true;
  }
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

size_t Tokenizer::find_close(size_t from) {
  // The first "}}}" at or after an earlier position is also the first at or after any later position up to it,
  // so each part of the line is searched once.
  if (cached_close_ != npos && cached_close_ >= from) return cached_close_;
  if (close_exhausted_) return npos;
  cached_close_ = line_.find("}}}", from);
  if (cached_close_ == npos) close_exhausted_ = true;
  return cached_close_;
}

Tokenizer::Span Tokenizer::find_element(size_t from) {
  size_t search = from;
  while (search < line_.size()) {
    size_t open = line_.find("{{{", search);
    if (open == npos) break;
    size_t tag_end = open + 3;
    while (tag_end < line_.size() && is_tag_char(line_[tag_end])) ++tag_end;
    if (tag_end > open + 3) {
      if (line_.substr(tag_end, 3) == "}}}") return Span{open, tag_end, tag_end + 3};
      if (tag_end < line_.size() && line_[tag_end] == ':') {
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
  if (position_ >= line_.size()) return false;
  if (!have_pending_ || (pending_.start != npos && pending_.start < position_)) {
    pending_ = find_element(position_);
    have_pending_ = true;
  }
  node.line = line_;
  node.fields.clear();
  node.tag = {};
  node.column = position_;
  if (pending_.start != position_) {
    size_t end = pending_.start == npos ? line_.size() : pending_.start;
    node.kind = Node::Kind::kText;
    node.text = line_.substr(position_, end - position_);
    position_ = end;
    return true;
  }
  node.kind = Node::Kind::kElement;
  node.text = line_.substr(pending_.start, pending_.end - pending_.start);
  node.tag = line_.substr(pending_.start + 3, pending_.tag_end - pending_.start - 3);
  if (line_[pending_.tag_end] == ':') {
    // Fields: everything up to "}}}", split at every ':' (seed 000: fields cannot contain ':').
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
    } else if (node.text.find_first_not_of(" \t\r\v\f") != npos) {
      return std::nullopt;
    }
  }
  return element;
}

bool is_contextual_tag(std::string_view tag) { return tag == "reset" || tag == "module" || tag == "mmap"; }

// --------------------------------------------------------------------------------------------------- fields

bool parse_integer_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset) {
  if (field.empty()) {
    error = "empty field";
    error_offset = 0;
    return false;
  }
  // seed 000 %i: hexadecimal after 0x, octal after a leading 0, decimal otherwise.
  if (field.size() >= 2 && field[0] == '0' && field[1] == 'x') {
    if (field.size() == 2) {
      error = "no hex digits after 0x";
      error_offset = 2;
      return false;
    }
    return parse_digits(field.substr(2), 16, 2, value, error, error_offset);
  }
  if (field[0] == '0') return parse_digits(field.substr(1), 8, 1, value, error, error_offset);
  return parse_digits(field, 10, 0, value, error, error_offset);
}

bool parse_decimal_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset) {
  if (field.empty()) {
    error = "empty field";
    error_offset = 0;
    return false;
  }
  return parse_digits(field, 10, 0, value, error, error_offset);
}

bool parse_address_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset) {
  if (field.empty()) {
    error = "empty field";
    error_offset = 0;
    return false;
  }
  // seed 000 %p: "If the digits are all 0 then the 0x prefix may be omitted."
  if (field.find_first_not_of('0') == npos) {
    value = 0;
    return true;
  }
  if (field.size() < 2 || field[0] != '0' || field[1] != 'x') {
    error = "expected 0x and hex digits";
    error_offset = 0;
    return false;
  }
  std::string_view digits = field.substr(2);
  if (digits.empty()) {
    error = "no hex digits after 0x";
    error_offset = 2;
    return false;
  }
  if (!parse_digits(digits, 16, 2, value, error, error_offset)) return false;
  if (digits.size() % 2 != 0) {
    error = "odd number of hex digits";
    error_offset = 2;
    return false;
  }
  if (digits.size() > 16) {
    error = "more than 16 hex digits";
    error_offset = 2;
    return false;
  }
  return true;
}

bool parse_hex_bytes_field(std::string_view field, std::vector<uint8_t>& bytes, const char*& error,
                           size_t& error_offset) {
  if (field.empty()) {
    error = "empty field";
    error_offset = 0;
    return false;
  }
  for (size_t i = 0; i < field.size(); ++i) {
    if (hex_value(field[i]) < 0) {
      error = "not a hex digit";
      error_offset = i;
      return false;
    }
  }
  if (field.size() % 2 != 0) {
    error = "odd number of hex digits";
    error_offset = 0;
    return false;
  }
  bytes.reserve(bytes.size() + field.size() / 2);
  for (size_t i = 0; i < field.size(); i += 2) {
    bytes.push_back(static_cast<uint8_t>(hex_value(field[i]) * 16 + hex_value(field[i + 1])));
  }
  return true;
}

// ------------------------------------------------------------------------------------------------- elements

bool parse_reset(const Node& node, ParseError& error) {
  return check_shape(node, "reset", 0, 0, "no fields", error);
}

bool parse_module(const Node& node, ModuleElement& out, ParseError& error) {
  if (!check_shape(node, "module", 3, SIZE_MAX, "ID, name, type and type fields", error)) return false;
  const char* problem = nullptr;
  size_t offset = 0;
  if (!parse_integer_field(node.fields[0], out.id, problem, offset)) {
    return field_error(node, 0, "ID", problem, offset, error);
  }
  out.name = node.fields[1];
  // %s: printable characters without ':' or '}' (seed 000); the ':' cannot occur after splitting.
  for (size_t i = 0; i < out.name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(out.name[i]);
    if (c == '}' || c < 0x20 || c == 0x7f) {
      return field_error(node, 1, "name", "'}' or a control character", i, error);
    }
  }
  out.type = node.fields[2];
  if (out.type != "elf") return element_error(node, node.field_column(2), "unsupported module type", error);
  if (!check_shape(node, "module", 4, 4, "4 fields (ID, name, elf, build ID)", error)) return false;
  out.build_id.clear();
  if (!parse_hex_bytes_field(node.fields[3], out.build_id, problem, offset)) {
    return field_error(node, 3, "build ID", problem, offset, error);
  }
  return true;
}

bool parse_mmap(const Node& node, MmapElement& out, ParseError& error) {
  if (!check_shape(node, "mmap", 3, SIZE_MAX, "start, size, type and type fields", error)) return false;
  const char* problem = nullptr;
  size_t offset = 0;
  if (!parse_address_field(node.fields[0], out.start, problem, offset)) {
    return field_error(node, 0, "start address", problem, offset, error);
  }
  if (!parse_integer_field(node.fields[1], out.size, problem, offset)) {
    return field_error(node, 1, "size", problem, offset, error);
  }
  // A region must not wrap around the end of the address space (it may end exactly at it).
  if (out.size != 0 && out.size - 1 > UINT64_MAX - out.start) {
    return element_error(node, node.field_column(1), "region runs past the end of the address space", error);
  }
  out.type = node.fields[2];
  if (out.type != "load") return element_error(node, node.field_column(2), "unsupported mmap type", error);
  if (!check_shape(node, "mmap", 6, 6, "6 fields (start, size, load, module, flags, address)", error)) {
    return false;
  }
  if (!parse_integer_field(node.fields[3], out.module_id, problem, offset)) {
    return field_error(node, 3, "module ID", problem, offset, error);
  }
  // Flags: one or more of r, w, x, in that order, either case (seed 000, "mmap ... load").
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
  if (!check_shape(node, "bt", 2, 3, "2 or 3 fields (frame, address, pc or ra)", error)) return false;
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
  if (!check_shape(node, "pc", 1, 2, "1 or 2 fields (address, pc or ra)", error)) return false;
  const char* problem = nullptr;
  size_t offset = 0;
  if (!parse_address_field(node.fields[0], out.address, problem, offset)) {
    return field_error(node, 0, "address", problem, offset, error);
  }
  return parse_kind(node, 1, out.kind, error);
}

}  // namespace sampler::markup
