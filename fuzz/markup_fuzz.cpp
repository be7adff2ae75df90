// Fuzz target: the symbolizer markup reader (LLVM's Symbolizer Markup Format; sections/markup.h): Tokenizer, tokenize,
// sole_element, MarkupParser, the field parsers and parse_reset/module/mmap/bt/pc.
//
// Each line of the input is tokenized and compared with a simple reference tokenizer written from the grammar
// in markup.h (quadratic, but obviously right); every element goes through every element parser and every
// field through every field parser. An element that parses is written again with the core markup writer
// (sections/core/markup_writer.h) and must parse back to the same values. The lines also go through a
// MarkupParser, whose nodes must be the tokenizer's wherever no element spans lines.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "sections/markup.h"

namespace sampler::fuzz {
namespace {

using markup::Node;
constexpr size_t npos = std::string_view::npos;

bool is_tag_char(char c) { return c >= 'a' && c <= 'z'; }

// The SGR sequences the Symbolizer Markup Format accepts: ESC [ 0 m, ESC [ 1 m, ESC [ 3x m with x from 0 to 7.
size_t reference_sgr(std::string_view text) {
  for (const char* sgr : {"\033[0m", "\033[1m", "\033[30m", "\033[31m", "\033[32m", "\033[33m", "\033[34m",
                          "\033[35m", "\033[36m", "\033[37m"}) {
    if (text.starts_with(sgr)) return std::string_view(sgr).size();
  }
  return 0;
}

// Reference: an element starts at the first "{{{" followed by lower-case letters and then "}}}", or ":" with a
// "}}}" somewhere after it (the element ends at the first one). Outside elements, each SGR sequence is a node;
// everything else is text, and adjacent text is one node.
std::vector<Node> reference_tokenize(std::string_view line) {
  std::vector<Node> nodes;
  size_t text_start = 0;
  size_t i = 0;
  auto flush_text = [&](size_t end) {
    size_t start = text_start;
    for (size_t at = text_start; at < end;) {
      const size_t length = reference_sgr(line.substr(at, end - at));
      if (length == 0) {
        ++at;
        continue;
      }
      if (at > start) {
        Node text;
        text.line = line;
        text.text = line.substr(start, at - start);
        text.column = start;
        nodes.push_back(text);
      }
      Node sgr;
      sgr.kind = Node::Kind::kSgr;
      sgr.line = line;
      sgr.text = line.substr(at, length);
      sgr.column = at;
      nodes.push_back(sgr);
      at += length;
      start = at;
    }
    if (end > start) {
      Node text;
      text.line = line;
      text.text = line.substr(start, end - start);
      text.column = start;
      nodes.push_back(text);
    }
  };
  const bool any_close = line.find("}}}") != npos;
  while (i < line.size()) {
    if (any_close && line.substr(i, 3) == "{{{") {
      size_t tag_end = i + 3;
      while (tag_end < line.size() && is_tag_char(line[tag_end])) ++tag_end;
      size_t end = npos;
      if (tag_end > i + 3) {
        if (line.substr(tag_end, 3) == "}}}") {
          end = tag_end + 3;
        } else if (tag_end < line.size() && line[tag_end] == ':') {
          const size_t close = line.find("}}}", tag_end + 1);
          if (close != npos) end = close + 3;
        }
      }
      if (end != npos) {
        flush_text(i);
        Node element;
        element.kind = Node::Kind::kElement;
        element.line = line;
        element.text = line.substr(i, end - i);
        element.column = i;
        element.tag = line.substr(i + 3, tag_end - i - 3);
        if (line[tag_end] == ':') {
          std::string_view content = line.substr(tag_end + 1, end - 3 - tag_end - 1);
          for (;;) {
            const size_t colon = content.find(':');
            element.fields.push_back(content.substr(0, colon));
            if (colon == npos) break;
            content.remove_prefix(colon + 1);
          }
        }
        nodes.push_back(element);
        i = end;
        text_start = end;
        continue;
      }
    }
    ++i;
  }
  flush_text(line.size());
  return nodes;
}

bool same_view(std::string_view a, std::string_view b) { return a.data() == b.data() && a.size() == b.size(); }

bool same_node(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.column != b.column || !same_view(a.text, b.text)) return false;
  if (!a.is_element()) return true;
  if (a.tag != b.tag || a.fields.size() != b.fields.size()) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    if (!same_view(a.fields[i], b.fields[i])) return false;
  }
  return true;
}

// Writes `element` with the core writer, tokenizes the result and returns its only element.
template <class Write>
Node rewrite(std::string& storage, Write&& write) {
  char buffer[4096];
  CharBuffer out(buffer, sizeof buffer);
  write(out);
  FUZZ_CHECK(!out.overflowed());
  storage.assign(out.data(), out.size());
  const auto element = markup::sole_element(storage);
  FUZZ_CHECK(element.has_value());
  return *element;
}

void check_field_parsers(std::string_view field) {
  uint64_t value = 0;
  const char* error = nullptr;
  size_t offset = 0;
  if (!markup::parse_integer_field(field, value, error, offset)) FUZZ_CHECK(error != nullptr && offset <= field.size());
  if (!markup::parse_decimal_field(field, value, error, offset)) FUZZ_CHECK(error != nullptr && offset <= field.size());
  if (markup::parse_address_field(field, value, error, offset)) {
    // %p: written back canonically, it parses to the same value.
    std::string text;
    const Node node = rewrite(text, [&](CharBuffer& out) { markup::write_pc(out, value, markup::CodeKind::kUnknown); });
    markup::PcElement pc;
    markup::ParseError parse_error;
    FUZZ_CHECK(markup::parse_pc(node, pc, parse_error) && pc.address == value);
  } else {
    FUZZ_CHECK(error != nullptr && offset <= field.size());
  }
  std::vector<uint8_t> bytes;
  if (markup::parse_hex_bytes_field(field, bytes, error, offset)) {
    FUZZ_CHECK(bytes.size() == (field.size() + 1) / 2);  // an odd count reads as if a 0 came first
  } else {
    FUZZ_CHECK(error != nullptr && offset <= field.size() && bytes.empty());
  }
}

void check_element(const Node& node) {
  markup::ParseError error;
  std::string text;
  auto check_error = [&] {
    FUZZ_CHECK(!error.message.empty());
    FUZZ_CHECK(error.column <= node.line.size());
  };

  if (markup::parse_reset(node, error)) {
    FUZZ_CHECK(node.tag == "reset");  // fields after it are ignored, as llvm-symbolizer ignores them
  } else {
    check_error();
  }

  markup::ModuleElement module;
  if (markup::parse_module(node, module, error)) {
    FUZZ_CHECK(node.tag == "module" && node.fields.size() >= 4 && !module.build_id.empty());
    const Node again = rewrite(text, [&](CharBuffer& out) {
      markup::write_module(out, module.id, module.name.data(), module.name.size(), module.build_id.data(),
                           module.build_id.size());
    });
    markup::ModuleElement parsed;
    FUZZ_CHECK(markup::parse_module(again, parsed, error));
    // The writer replaces what the markup format does not allow in a name (control characters, '}'), byte for byte.
    const bool printable = module.name.find_first_of("}\x7f") == std::string_view::npos &&
                           std::none_of(module.name.begin(), module.name.end(),
                                        [](char c) { return static_cast<unsigned char>(c) < 0x20; });
    FUZZ_CHECK(parsed.id == module.id && parsed.name.size() == module.name.size() &&
               (!printable || parsed.name == module.name) && parsed.type == "elf" &&
               parsed.build_id == module.build_id);
  } else {
    check_error();
  }

  markup::MmapElement mmap;
  if (markup::parse_mmap(node, mmap, error)) {
    FUZZ_CHECK(node.tag == "mmap" && node.fields.size() >= 6);
    FUZZ_CHECK(mmap.readable || mmap.writable || mmap.executable);
    std::string flags;
    if (mmap.readable) flags += 'r';
    if (mmap.writable) flags += 'w';
    if (mmap.executable) flags += 'x';
    const Node again = rewrite(text, [&](CharBuffer& out) {
      markup::write_mmap(out, mmap.start, mmap.size, mmap.module_id, flags.c_str(), mmap.module_relative_address);
    });
    markup::MmapElement parsed;
    FUZZ_CHECK(markup::parse_mmap(again, parsed, error));
    FUZZ_CHECK(parsed.start == mmap.start && parsed.size == mmap.size && parsed.module_id == mmap.module_id &&
               parsed.readable == mmap.readable && parsed.writable == mmap.writable &&
               parsed.executable == mmap.executable &&
               parsed.module_relative_address == mmap.module_relative_address);
  } else {
    check_error();
  }

  markup::BtElement bt;
  if (markup::parse_bt(node, bt, error)) {
    const Node again = rewrite(text, [&](CharBuffer& out) { markup::write_bt(out, bt.frame, bt.address, bt.kind); });
    markup::BtElement parsed;
    FUZZ_CHECK(markup::parse_bt(again, parsed, error));
    FUZZ_CHECK(parsed.frame == bt.frame && parsed.address == bt.address && parsed.kind == bt.kind);
  } else {
    check_error();
  }

  markup::PcElement pc;
  if (markup::parse_pc(node, pc, error)) {
    const Node again = rewrite(text, [&](CharBuffer& out) { markup::write_pc(out, pc.address, pc.kind); });
    markup::PcElement parsed;
    FUZZ_CHECK(markup::parse_pc(again, parsed, error));
    FUZZ_CHECK(parsed.address == pc.address && parsed.kind == pc.kind);
  } else {
    check_error();
  }

  for (std::string_view field : node.fields) check_field_parsers(field);
}

void check_line(std::string_view line) {
  const std::vector<Node> nodes = markup::tokenize(line);
  const std::vector<Node> expected = reference_tokenize(line);
  FUZZ_CHECK(nodes.size() == expected.size());
  size_t column = 0;
  size_t elements = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    FUZZ_CHECK(same_node(node, expected[i]));
    // The nodes cover the line, left to right, without gaps; text nodes never touch each other.
    FUZZ_CHECK(node.column == column && same_view(node.line, line) && !node.text.empty());
    FUZZ_CHECK(same_view(node.text, line.substr(node.column, node.text.size())));
    if (i > 0) FUZZ_CHECK(node.kind != Node::Kind::kText || nodes[i - 1].kind != Node::Kind::kText);
    column += node.text.size();
    if (node.is_element()) {
      ++elements;
      FUZZ_CHECK(node.text.starts_with("{{{") && node.text.ends_with("}}}"));
      for (size_t f = 0; f < node.fields.size(); ++f) {
        FUZZ_CHECK(is_inside(node.fields[f], node.text));
        FUZZ_CHECK(node.field_column(f) <= line.size());
      }
      check_element(node);
    }
  }
  FUZZ_CHECK(column == line.size());
  const auto sole = markup::sole_element(line);
  if (sole) {
    FUZZ_CHECK(elements == 1);
    const bool contextual = sole->tag == "reset" || sole->tag == "module" || sole->tag == "mmap";
    FUZZ_CHECK(markup::is_contextual_tag(sole->tag) == contextual);
  }
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sampler::markup::Node;
  std::string_view text = sampler::fuzz::as_text(data, size);
  sampler::markup::MarkupParser parser;
  Node node;
  for (;;) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    sampler::fuzz::check_line(line);
    // The parser: a line that neither continues nor opens an element that spans lines gives the tokenizer's nodes.
    parser.begin_line(line);
    std::vector<Node> nodes;
    while (parser.next(node)) nodes.push_back(node);
    size_t column = 0;
    for (const Node& piece : nodes) {
      if (piece.line.data() != line.data()) {
        // The element that ended on this line: its text is its lines joined, and it is one element.
        FUZZ_CHECK(parser.line_started_inside() && piece.is_element() && piece.column == 0);
        FUZZ_CHECK(piece.text.starts_with("{{{") && piece.text.ends_with("}}}"));
        continue;
      }
      FUZZ_CHECK(piece.column >= column && !piece.text.empty());
      column = piece.column + piece.text.size();
    }
    FUZZ_CHECK(column <= line.size());
    if (!parser.line_started_inside() && !parser.inside_element()) {
      const std::vector<Node> expected = sampler::markup::tokenize(line);
      FUZZ_CHECK(nodes.size() == expected.size());
      for (size_t i = 0; i < nodes.size(); ++i) FUZZ_CHECK(sampler::fuzz::same_node(nodes[i], expected[i]));
    }
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  if (parser.finish(node)) FUZZ_CHECK(node.kind == Node::Kind::kText && node.text.starts_with("{{{"));
  return 0;
}
