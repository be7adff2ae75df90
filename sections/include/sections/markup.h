// Symbolizer markup reader (shared/seeds/000, Symbolizer Markup Format), after LLVM's design (STYLE.md):
// syntax and meaning are separate.
//  - The Tokenizer splits one line into plain text and {{{tag:field:...}}} elements. It never fails: anything
//    that is not a well-formed element is text. Its views point into the line, which the caller keeps alive.
//  - Typed parse_* helpers validate the fields of the elements this project reads (reset, module, mmap, bt,
//    pc) and return either the values or an error message with the byte column of the offending field.
// resolve-backtrace uses it to recognise and pass through contextual lines; tests use it to check the
// runtime's output. Elements spanning lines (hexdict) and ANSI SGR sequences are not interpreted: they are text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sections/core/markup_writer.h"

namespace sampler::markup {

/// One piece of a line: plain text or an element.
struct Node {
  enum class Kind : uint8_t { kText, kElement };
  Kind kind = Kind::kText;
  std::string_view line;  ///< the whole line the node came from
  std::string_view text;  ///< the node's bytes; for an element "{{{...}}}" inclusive
  size_t column = 0;      ///< 0-based byte offset of `text` in the line
  std::string_view tag;   ///< elements: the tag, lower-case letters ("bt")
  std::vector<std::string_view> fields;  ///< elements: the fields after the tag (none for "{{{reset}}}")

  bool is_element() const { return kind == Kind::kElement; }
  /// 0-based byte offset in the line of fields[index] (index < fields.size()).
  size_t field_column(size_t index) const { return static_cast<size_t>(fields[index].data() - line.data()); }
};

/// Splits a line into nodes, left to right. An element is "{{{", a tag of one or more lower-case letters, then
/// either "}}}" or ":" and fields up to the first "}}}"; fields are separated by ':' (seed 000, "Common markup
/// element syntax"). Adjacent text is one node; an empty line gives no node. Linear in the line's length.
class Tokenizer {
 public:
  /// `line` (without its line end) must outlive the tokenizer and the nodes it returns.
  explicit Tokenizer(std::string_view line) : line_(line) {}

  /// Fills `node` with the next node (reusing its fields' storage); returns false at the end of the line.
  bool next(Node& node);

 private:
  struct Span {
    size_t start;    ///< "{{{" (npos: no element)
    size_t tag_end;  ///< one past the tag
    size_t end;      ///< one past "}}}"
  };
  /// The first element starting at or after `from`.
  Span find_element(size_t from);
  /// Position of the first "}}}" at or after `from`, or npos.
  size_t find_close(size_t from);

  std::string_view line_;
  size_t position_ = 0;
  Span pending_{std::string_view::npos, 0, 0};  ///< the next element, found while scanning text before it
  bool have_pending_ = false;
  size_t cached_close_ = std::string_view::npos;  ///< the last "}}}" found
  bool close_exhausted_ = false;                  ///< no "}}}" after the last search position
};

/// Every node of `line` (views into it).
std::vector<Node> tokenize(std::string_view line);

/// The element if `line` is exactly one element surrounded only by whitespace (how contextual elements are
/// written, seed 000 "Contextual elements"); nullopt otherwise.
std::optional<Node> sole_element(std::string_view line);

/// True for the contextual element tags: reset, module, mmap.
bool is_contextual_tag(std::string_view tag);

// ----------------------------------------------------------------------------------------------- fields
// Each returns false and sets `error` (static English text) and `error_offset` (0-based, within the field)
// when the field is malformed.

/// %i: non-negative integer, hexadecimal after "0x", octal after a leading "0", decimal otherwise; 64 bits.
bool parse_integer_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset);
/// %u: non-negative decimal integer; 64 bits.
bool parse_decimal_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset);
/// %p: "0x" and an even number (2 to 16) of hex digits, either case; or all zero digits without "0x".
bool parse_address_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset);
/// %x: a non-empty even number of hex digits, either case, no prefix; appended to `bytes`.
bool parse_hex_bytes_field(std::string_view field, std::vector<uint8_t>& bytes, const char*& error,
                           size_t& error_offset);

// --------------------------------------------------------------------------------------------- elements

/// Why an element's fields are malformed.
struct ParseError {
  std::string message;  ///< English, naming the field: "module: bad ID: ..."
  size_t column = 0;    ///< 0-based byte offset in the line of the offending character
};

/// {{{module:%i:%s:elf:%x}}}
struct ModuleElement {
  uint64_t id = 0;
  std::string_view name;  ///< may be empty
  std::string_view type;  ///< "elf" (the only type supported)
  std::vector<uint8_t> build_id;
};

/// {{{mmap:%p:%i:load:%i:%s:%p}}}
struct MmapElement {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string_view type;  ///< "load" (the only type supported)
  uint64_t module_id = 0;
  bool readable = false, writable = false, executable = false;
  uint64_t module_relative_address = 0;
};

/// {{{bt:%u:%p}}}, {{{bt:%u:%p:ra}}}, {{{bt:%u:%p:pc}}}
struct BtElement {
  uint64_t frame = 0;
  uint64_t address = 0;
  CodeKind kind = CodeKind::kUnknown;
};

/// {{{pc:%p}}}, {{{pc:%p:ra}}}, {{{pc:%p:pc}}}
struct PcElement {
  uint64_t address = 0;
  CodeKind kind = CodeKind::kUnknown;
};

/// Each checks the tag, the number of fields and every field. On failure returns false and fills `error`;
/// `out` is then unspecified. Views in `out` point into the node's line.
bool parse_reset(const Node& node, ParseError& error);
bool parse_module(const Node& node, ModuleElement& out, ParseError& error);
bool parse_mmap(const Node& node, MmapElement& out, ParseError& error);
bool parse_bt(const Node& node, BtElement& out, ParseError& error);
bool parse_pc(const Node& node, PcElement& out, ParseError& error);

}  // namespace sampler::markup
