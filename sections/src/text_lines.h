// Small helpers for the line-oriented text of sites and samples, shared by the sites index and the join (private
// to the formats library).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sampler::text {

/// The next line of `text` from `position` without its "\n" and without one trailing "\r"; advances position.
inline std::string_view next_line(std::string_view text, size_t& position) {
  const char* start = text.data() + position;
  const void* newline = std::memchr(start, '\n', text.size() - position);
  size_t length = newline != nullptr ? static_cast<size_t>(static_cast<const char*>(newline) - start)
                                     : text.size() - position;
  position += length + (newline != nullptr ? 1 : 0);
  std::string_view line(start, length);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

/// "'LABEL':LINE" (or "'LABEL'" for line 0): where a section is, for messages.
inline std::string place(std::string_view label, uint64_t line) {
  std::string text = "'";
  text += label;
  text += "'";
  if (line != 0) {
    text += ':';
    text += std::to_string(line);
  }
  return text;
}

/// The value text quoted for a message, shortened so that a 10 MB line does not become a 10 MB message.
inline std::string quote_value(std::string_view value) {
  constexpr size_t kShown = 40;
  std::string text = "'";
  text += value.substr(0, kShown);
  if (value.size() > kShown) text += "...";
  text += "'";
  return text;
}

}  // namespace sampler::text
