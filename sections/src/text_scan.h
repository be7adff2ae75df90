// Fast byte scanning for the text formats (private to the formats library).
//
// Reports and site information are hundreds of megabytes of short lines; the parsers only need to find the
// few lines that start with '<' (tags) and to count the others. These helpers do that over whole buffers,
// 16 bytes at a time where SSE2 is available (every x86-64), instead of one memchr call per line.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sampler::text {

/// Number of '\n' bytes in [data, data + size).
inline size_t count_newlines(const char* data, size_t size) {
  size_t count = 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  while (size - i >= 16) {
    // Each compare gives 0xff (-1) per match; subtracting accumulates per-byte counts, which cannot overflow
    // within 255 rounds. _mm_sad_epu8 then adds the 16 byte counters into two 64-bit lanes.
    size_t rounds = (size - i) / 16;
    if (rounds > 255) rounds = 255;
    __m128i acc = _mm_setzero_si128();
    for (size_t r = 0; r < rounds; ++r, i += 16) {
      __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(chunk, newline));
    }
    __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    count += static_cast<size_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<size_t>(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
  }
#endif
  for (; i < size; ++i) count += data[i] == '\n';
  return count;
}

inline size_t count_newlines(std::string_view text) { return count_newlines(text.data(), text.size()); }

/// Offset of the first line in text[from, size) that starts with `c` (from must be at a line start), or
/// text.size() if none does. A "line start" is offset `from` or any offset just after a '\n'.
inline size_t find_line_starting_with(std::string_view text, size_t from, char c) {
  const char* data = text.data();
  size_t size = text.size();
  size_t at = from;
  while (at < size) {
    const void* hit = std::memchr(data + at, c, size - at);
    if (hit == nullptr) return size;
    size_t offset = static_cast<size_t>(static_cast<const char*>(hit) - data);
    if (offset == from || data[offset - 1] == '\n') return offset;
    at = offset + 1;
  }
  return size;
}

/// Calls f(begin, end) for each line of `run`, a run of whole lines each ending in '\n': [begin, end) is the
/// line without its '\n'. Finds 16 line ends per step instead of one memchr call per (often tiny) line.
template <class F>
inline void for_each_line(std::string_view run, F&& f) {
  const char* data = run.data();
  const size_t size = run.size();
  size_t start = 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  for (; size - i >= 16; i += 16) {
    unsigned mask = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i)), newline)));
    while (mask != 0) {
      size_t end = i + static_cast<size_t>(__builtin_ctz(mask));
      f(start, end);
      start = end + 1;
      mask &= mask - 1;
    }
  }
#endif
  for (; i < size; ++i) {
    if (data[i] == '\n') {
      f(start, i);
      start = i + 1;
    }
  }
}

}  // namespace sampler::text
