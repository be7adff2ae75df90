// Splitting text into lines, the one way every part does it: a line is what precedes "\n" (or the end), without
// the "\n" and without one trailing "\r" (reports and site text may come with CRLF endings).
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace sampler::text {

/// The next line of `text` from `position`; advances position past it and its "\n".
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

/// The first line of `rest`, taken off it: `while (!rest.empty()) use(take_line(rest));`.
inline std::string_view take_line(std::string_view& rest) {
  size_t position = 0;
  std::string_view line = next_line(rest, position);
  rest.remove_prefix(position);
  return line;
}

}  // namespace sampler::text
