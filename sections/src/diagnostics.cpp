// Diagnostics without printing (see sections/diagnostics.h).
#include "sections/diagnostics.h"

#include <algorithm>

#include "sections/core/char_buffer.h"

namespace sampler {
namespace {

/// Length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF) at the
/// start of `text`, whose first byte is 0x80 or more; 0 if there is none, or if it encodes a C1 control character.
size_t utf8_sequence(std::string_view text) {
  auto byte = [&](size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u; };
  const unsigned lead = byte(0);
  // The second byte's range depends on the lead (Unicode Table 3-7); the later ones are 0x80-0xBF.
  unsigned low = 0x80, high = 0xbf;
  size_t length;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    if (lead == 0xc2) low = 0xa0;  // U+0080-U+009F are the C1 control characters
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

void DiagnosticSink::warning(std::string file, uint64_t line, std::string message) {
  report(Diagnostic{Severity::kWarning, std::move(file), line, std::move(message)});
}

void DiagnosticSink::error(std::string file, uint64_t line, std::string message) {
  report(Diagnostic{Severity::kError, std::move(file), line, std::move(message)});
}

void DiagnosticSink::warning(DiagnosticCode code, std::string file, uint64_t line, std::string message) {
  report(Diagnostic{Severity::kWarning, std::move(file), line, std::move(message), code});
}

void DiagnosticSink::error(DiagnosticCode code, std::string file, uint64_t line, std::string message) {
  report(Diagnostic{Severity::kError, std::move(file), line, std::move(message), code});
}

void CappedSink::report(const Diagnostic& diagnostic) {
  if (diagnostic.severity != Severity::kError) return sink_.report(diagnostic);
  ++errors_;
  if (errors_ <= kMaxErrors) {
    sink_.report(diagnostic);
  } else if (errors_ == kMaxErrors + 1) {
    sink_.error(DiagnosticCode::kTooManyErrors, diagnostic.file, diagnostic.line,
                "too many errors (" + std::to_string(kMaxErrors) +
                    "); the rest of this input is still read, but its errors are not reported");
  }
}

size_t DiagnosticList::error_count() const {
  return std::count_if(items.begin(), items.end(),
                       [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

size_t DiagnosticList::warning_count() const { return items.size() - error_count(); }

namespace {

enum class Escape { kTerminal, kField, kJson };

// The one walker behind every escaping: runs of bytes that need no escaping are copied at once, well-formed UTF-8
// is kept, and every other byte is written in hex (\xNN for a terminal, \u00XX in JSON). A field of
// tab-separated text escapes the tab too.
void append_escaped_as(std::string& out, std::string_view text, Escape escape) {
  const bool json = escape == Escape::kJson;
  auto plain = [json, escape](unsigned char c) {
    return json ? c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
                : (c >= 0x20 && c < 0x7f) || (c == '\t' && escape == Escape::kTerminal);
  };
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (plain(c)) {
      size_t end = i + 1;
      while (end < text.size() && plain(static_cast<unsigned char>(text[end]))) ++end;
      out.append(text, i, end - i);
      i = end;
      continue;
    }
    if (json && (c == '"' || c == '\\')) {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (size_t length = utf8_sequence(text.substr(i)); length != 0) {
        out.append(text, i, length);
        i += length;
        continue;
      }
    }
    out += json ? "\\u00" : "\\x";
    out += kHexDigits[c >> 4];
    out += kHexDigits[c & 15];
    ++i;
  }
}

}  // namespace

void append_escaped(std::string& out, std::string_view text) { append_escaped_as(out, text, Escape::kTerminal); }

std::string escape_control_characters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_escaped(out, text);
  return out;
}

std::string escape_field(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_escaped_as(out, text, Escape::kField);
  return out;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  out.reserve(text.size() + 2);
  append_escaped_as(out, text, Escape::kJson);
  return out + '"';
}

std::string format_diagnostic(std::string_view program, const Diagnostic& diagnostic) {
  std::string text(program);
  text += ": ";
  if (!diagnostic.file.empty()) {
    text += '\'';
    append_escaped(text, diagnostic.file);
    text += '\'';
    if (diagnostic.line != 0) {
      text += ':';
      text += std::to_string(diagnostic.line);
    }
    text += ": ";
  }
  text += diagnostic.severity == Severity::kWarning ? "warning: " : "error: ";
  append_escaped(text, diagnostic.message);
  return text;
}

}  // namespace sampler
