// Symbolizer markup reader (LLVM's Symbolizer Markup Format), after LLVM's design:
// syntax and meaning are separate.
//  - The Tokenizer splits one line into plain text, ANSI SGR colour sequences and {{{tag:field:...}}} elements.
//    It never fails: anything that is not a well-formed element or one of the Symbolizer Markup Format's SGR sequences
//    is text. Its views point into the line, which the caller keeps alive.
//  - The MarkupParser reads lines one after another and also finds elements that span lines (the
//    Symbolizer Markup Format's hexdict), as llvm-symbolizer's MarkupParser does.
//  - Typed parse_* helpers validate the fields of the elements this project reads (reset, module, mmap, bt,
//    pc) and return either the values or an error message with the byte column of the offending field.
// Input is read as leniently as `llvm-symbolizer --filter-markup`, the consumer this project feeds, reads it
// (docs/formats.md section 3; docs/decisions.md): an address has any number of hex digits after "0x" (compiler-rt
// prints "0x%zx"), an integer may be written 0x/0X, 0b/0B, 0o, 0-octal or decimal, a build ID may have an odd number of
// digits, a module name may hold any character, extra fields are ignored. Whatever it accepts, this reader
// accepts; the core writer (sections/core/markup_writer.h) still writes exactly what the Symbolizer Markup Format says.
// resolve-backtrace uses it to recognise and pass through contextual lines; tests use it to check the
// runtime's output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sections/core/markup_writer.h"

namespace sampler::markup {

/// One piece of a line: plain text, an SGR sequence or an element.
struct Node {
  /// kSgr: one of the ANSI SGR sequences the markup format accepts ("\033[0m" reset, "\033[1m" bold, "\033[30m" to
  /// "\033[37m" colours), outside any element. They set how the text after them is shown; they are not text.
  enum class Kind : uint8_t { kText, kElement, kSgr };
  Kind kind = Kind::kText;
  std::string_view line;  ///< the whole line the node came from (for an element that spans lines: its lines)
  std::string_view text;  ///< the node's bytes; for an element "{{{...}}}" inclusive
  size_t column = 0;      ///< 0-based byte offset of `text` in the line
  std::string_view tag;   ///< elements: the tag, lower-case letters ("bt")
  std::vector<std::string_view> fields;  ///< elements: the fields after the tag (none for "{{{reset}}}")

  bool is_element() const { return kind == Kind::kElement; }
  bool is_sgr() const { return kind == Kind::kSgr; }
  /// 0-based byte offset in the line of fields[index] (index < fields.size()).
  size_t field_column(size_t index) const { return static_cast<size_t>(fields[index].data() - line.data()); }
};

/// Splits a line into nodes, left to right. An element is "{{{", a tag of one or more lower-case letters, then
/// either "}}}" or ":" and fields up to the first "}}}"; fields are separated by ':' (Symbolizer Markup Format, "Common
/// markup element syntax"). Outside elements, each SGR sequence the Symbolizer Markup Format accepts is a node of its
/// own (Symbolizer Markup Format, "Colorization"); nothing is interpreted inside a field. Adjacent text is one node; an
/// empty line gives no node. Linear in the line's length.
class Tokenizer {
 public:
  /// `line` (without its line end) must outlive the tokenizer and the nodes it returns.
  explicit Tokenizer(std::string_view line) : Tokenizer(line, 0, line.size()) {}
  /// Only line[begin, end) is split; nodes still view `line`, with columns counted from its start.
  Tokenizer(std::string_view line, size_t begin, size_t end);

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
  /// Position of the first "}}}" at or after `from` (ending by end_), or npos.
  size_t find_close(size_t from);

  std::string_view line_;
  size_t end_;
  size_t position_;
  Span pending_{std::string_view::npos, 0, 0};  ///< the next element, found while scanning text before it
  bool have_pending_ = false;
  size_t cached_close_ = std::string_view::npos;  ///< the last "}}}" found
  bool close_exhausted_ = false;                  ///< no "}}}" after the last search position
};

/// Every node of `line` (views into it).
std::vector<Node> tokenize(std::string_view line);

/// Length of the SGR sequence the Symbolizer Markup Format accepts at the start of `text` ("\033[0m", "\033[1m",
/// "\033[30m" to "\033[37m"), or 0 if there is none.
size_t sgr_length(std::string_view text);

/// The element if `line` is exactly one element surrounded only by whitespace and SGR sequences (how contextual
/// elements are written, the Symbolizer Markup Format "Contextual elements"); nullopt otherwise.
std::optional<Node> sole_element(std::string_view line);

/// True for the contextual element tags: reset, module, mmap.
bool is_contextual_tag(std::string_view tag);

/// Reads markup a line at a time, as llvm-symbolizer's MarkupParser does, elements that span lines included
/// (Symbolizer Markup Format: "{{{hexdict:" and its lines up to "}}}"). A line opens such an element when, after its
/// last complete element, it ends with "{{{TAG:" for one of the multi-line tags and holds no "}}}" after it; the lines
/// after it belong to the element up to the first "}}}", and the rest of that line is read as usual. The element comes
/// out as one node when its last line is read: its text is its lines joined by "\n", kept by the parser until the
/// next line begins (its `line` views that text, its column is 0). Every other node views the line given.
class MarkupParser {
 public:
  explicit MarkupParser(std::vector<std::string> multiline_tags = {"hexdict"});

  /// Starts the next line (without its line end); it must outlive the nodes returned for it. A line inside a
  /// multi-line element is taken into it.
  void begin_line(std::string_view line);
  /// Fills `node` with the next node of the line; false when there is none left.
  bool next(Node& node);
  /// True when the line begun last started inside a multi-line element (it continues or ends one).
  bool line_started_inside() const { return started_inside_; }
  /// True when a multi-line element is open at the end of the line begun last: the next line belongs to it.
  bool inside_element() const { return !open_.empty(); }
  /// Ends the input. An element still open is not one (llvm-symbolizer shows it as text): it is given back as one
  /// text node, and true is returned.
  bool finish(Node& node);
  /// Forgets an open element (a new input begins).
  void reset();

 private:
  std::vector<std::string> multiline_tags_;
  std::string_view line_;
  std::string open_;      // the open element's text so far
  std::string finished_;  // the element that ended on this line, or the text given back by finish()
  bool element_ready_ = false;
  bool started_inside_ = false;
  Tokenizer tokenizer_{std::string_view()};
};

// ----------------------------------------------------------------------------------------------- fields
// Each returns false and sets `error` (static English text) and `error_offset` (0-based, within the field)
// when the field is malformed.

/// %i: non-negative integer of 64 bits, as llvm-symbolizer reads it: hexadecimal after "0x" or "0X", binary after
/// "0b" or "0B", octal after "0o" or after a leading "0" followed by a digit, decimal otherwise.
bool parse_integer_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset);
/// %u: non-negative decimal integer; 64 bits.
bool parse_decimal_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset);
/// %p: "0x" and one or more hex digits of either case, any number of them (compiler-rt prints "0x%zx"), whose value
/// fits in 64 bits; or all zero digits without "0x".
bool parse_address_field(std::string_view field, uint64_t& value, const char*& error, size_t& error_offset);
/// %x: one or more hex digits, either case, no prefix; appended to `bytes`. An odd number of digits is read as if
/// a "0" came first ("abc" is 0a bc), as llvm-symbolizer reads build IDs.
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
  std::string_view name;  ///< may be empty; any characters but ':' (llvm-symbolizer does not check it)
  std::string_view type;  ///< "elf" (the only type supported)
  std::vector<uint8_t> build_id;
};

/// {{{mmap:%p:%i:load:%i:%s:%p}}}
struct MmapElement {
  uint64_t start = 0;
  uint64_t size = 0;  ///< start + size may pass 2^64: llvm-symbolizer accepts such a region too
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

/// Each checks the tag, that the element has at least its fields, and every field. Fields past the element's
/// last are ignored, as llvm-symbolizer ignores them (it warns); the pc/ra suffix of bt and pc is read only when
/// it is the last field, as llvm-symbolizer reads it. On failure returns false and fills `error`; `out` is then
/// unspecified. Views in `out` point into the node's line.
bool parse_reset(const Node& node, ParseError& error);
bool parse_module(const Node& node, ModuleElement& out, ParseError& error);
bool parse_mmap(const Node& node, MmapElement& out, ParseError& error);
bool parse_bt(const Node& node, BtElement& out, ParseError& error);
bool parse_pc(const Node& node, PcElement& out, ParseError& error);

}  // namespace sampler::markup
