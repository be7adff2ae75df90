// The hot loop of reading runs, for analysis/src/runs.cpp alone: what a samples line says (which of its counters
// are not zero, and how many it has) without converting a number. Lines up to 7 bytes are read as one 64-bit word
// (SWAR), windows of 64 bytes with SSE2 masks where the CPU has it, anything else a byte at a time; all three
// agree on every line (tests/analysis/reading_test.cpp checks them against a plain reader).
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "analysis/predicates.h"  // kMaxCounters

// Internal linkage, as when this was part of runs.cpp: the compiler inlines the hot loop as it did when the
// sampler-analyze rows of docs/performance.md ("Latest run") were measured.
namespace sampler::analysis::samples_line {
namespace {

// Byte classes of a samples line: digits (0 for '0', 1 for the others, so that a class is the "non-zero" bit
// itself), tab, line end, carriage return, anything else.
enum ByteClass : uint8_t { kZeroDigit = 0, kNonZeroDigit = 1, kTab, kNewline, kReturn, kOtherByte };
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> table{};
  table.fill(kOtherByte);
  table['0'] = kZeroDigit;
  for (char c = '1'; c <= '9'; ++c) table[static_cast<unsigned char>(c)] = kNonZeroDigit;
  table['\t'] = kTab;
  table['\n'] = kNewline;
  table['\r'] = kReturn;
  return table;
}();

// A samples line of at most 7 bytes before its "\n" ("12\t0\t3\n", most lines), read as one 64-bit word:
// the bytes are classified all at once (SWAR), so that no branch depends on how many digits a counter has.
// Sets `nonzero` (bit c: counter c is not zero) and `column` (counters - 1); returns the line's length with its
// "\n", or 0 when the line is longer or is anything but digits and tabs with a digit in every counter: the
// byte loop then reads it (and judges it). `p` must have 8 readable bytes.
size_t short_line(const char* p, uint32_t& nonzero, uint32_t& column) {
  if constexpr (std::endian::native != std::endian::little) return 0;
  constexpr uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080, kLow = 0x7f7f7f7f7f7f7f7f;
  uint64_t word;
  std::memcpy(&word, p, 8);
  // Per byte, its high bit set when the byte is c (computed without carries from one byte into the next).
  auto equal = [word](uint8_t c) {
    uint64_t x = word ^ (kOnes * c);
    return ~(((x & kLow) + kLow) | x | kLow);
  };
  uint64_t newlines = equal('\n');
  uint64_t newline = newlines & -newlines;  // the first "\n"
  uint64_t before = (newline - 1) & kHigh;  // the bytes before it
  uint64_t x = word ^ (kOnes * '0');  // digits become 0 to 9
  uint64_t digit = ~(((x & kLow) + kOnes * (0x80 - 10)) | x) & before;  // below 10
  uint64_t nonzero_digit = ((x & kLow) + kLow) & digit;                  // and not 0
  uint64_t tab = equal('\t') & before;
  // Each counter has a digit: no tab first, last or next to another.
  bool empty_counter = (tab & (0x80 | (tab << 8) | (newline >> 8))) != 0;
  if (newline == 0 || before == 0 || (digit | tab) != before || empty_counter) return 0;
  uint32_t bits = 0, c = 0;
  for (uint64_t t = tab; t != 0; t &= t - 1, ++c) {  // as many rounds as the scheme has tabs: predictable
    uint64_t counter = (t & -t) - 1;                  // the bytes before this tab
    bits |= static_cast<uint32_t>((nonzero_digit & counter) != 0) << c;
    nonzero_digit &= ~counter;
  }
  nonzero = bits | static_cast<uint32_t>(nonzero_digit != 0) << c;
  column = c;
  return static_cast<size_t>(__builtin_ctzll(newline) >> 3) + 1;
}

// One line from p (< end): which counters are non-zero (bit c for counter c), their count - 1, and whether
// the line is digits and tabs with a digit in every counter (a "\r" before the "\n" allowed). Returns the
// start of the next line. Short lines (most of them) go through short_line(); the others, one byte at a time.
inline const char* scan_line(const char* p, const char* end, uint32_t& nonzero, uint32_t& column,
                             bool& well_formed) {
  if (end - p >= 8) {
    if (size_t length = short_line(p, nonzero, column)) return p + length;
  }
  bool digits = false;
  for (; p < end; ++p) {
    uint8_t kind = kByteClass[static_cast<unsigned char>(*p)];
    if (kind <= kNonZeroDigit) {  // the common case, without a branch on the digit's value
      digits = true;
      nonzero |= static_cast<uint32_t>(kind) << column;
    } else if (kind == kNewline) {
      break;
    } else if (kind == kTab) {
      if (!digits || column + 1 >= kMaxCounters) well_formed = false;
      else ++column;
      digits = false;
    } else if (!(kind == kReturn && (p + 1 == end || p[1] == '\n'))) {
      well_formed = false;
    }
  }
  if (!digits) well_formed = false;
  return p + 1;  // past the "\n"
}

#if defined(__SSE2__)
// The lines that start at p and end in the 64 bytes from p (fewer before `end`): each as take(nonzero, column,
// well_formed), from masks of the window's bytes made 16 at a time, so that a line costs a few operations on
// them and no branch on its digits. Lines with anything but digits and tabs, or an empty counter, go to
// scan_line() (which judges them). Returns the start of the first line not taken (p: none ended).
template <class Take>
__attribute__((always_inline)) inline const char* take_window(const char* p, const char* end, Take&& take) {
  alignas(16) char padded[64];
  const size_t size = static_cast<size_t>(std::min<ptrdiff_t>(end - p, 64));
  const char* bytes = p;
  if (size < 64) {
    std::memset(padded, 0, sizeof padded);
    std::memcpy(padded, p, size);
    bytes = padded;
  }
  uint64_t newline = 0, tab = 0, nonzero_digit = 0, digit = 0;
  for (int chunk = 0; chunk < 4; ++chunk) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 16 * chunk));
    __m128i value = _mm_sub_epi8(v, _mm_set1_epi8('0'));  // digits: 0 to 9, unsigned
    __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(value, _mm_set1_epi8(9)), value);
    __m128i is_zero = _mm_cmpeq_epi8(value, _mm_setzero_si128());
    auto bits = [](__m128i m) { return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(m))); };
    const int shift = 16 * chunk;
    newline |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))) << shift;
    tab |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))) << shift;
    digit |= bits(is_digit) << shift;
    nonzero_digit |= bits(_mm_andnot_si128(is_zero, is_digit)) << shift;
  }
  const uint64_t in_window = size == 64 ? ~uint64_t{0} : (uint64_t{1} << size) - 1;
  newline &= in_window;
  if (newline == 0) return p;
  // Lines to judge byte by byte: a byte that is no digit, tab or line end ("\r" among them), or a separator
  // right after another one or at a line's start (an empty counter or line). p starts a line.
  const uint64_t separator = newline | tab;
  const uint64_t field_start = (separator << 1) | 1;
  const uint64_t suspect = (~(digit | separator) | (separator & field_start)) & in_window;
  // Which counters are not zero, for all of them at once: a carry added at each counter's first byte runs
  // through its '0' digits and reaches the separator after it only if the counter has no other digit.
  const uint64_t zeros = in_window & ~(nonzero_digit | separator);
  const uint64_t nonzero_end = separator & ~(zeros + (field_start & in_window));
  uint64_t start = 1;  // bit of the line's first byte
  for (uint64_t rest = newline; rest != 0; rest &= rest - 1) {
    const uint64_t line_end = rest & -rest;                   // its "\n"
    const uint64_t line = ((line_end << 1) - 1) & ~(start - 1);  // its bytes, "\n" included
    const uint64_t first = start;
    start = line_end << 1;  // 0 after the window's last byte: no line starts there
    if ((suspect & line) != 0) [[unlikely]] {
      const char* at = p + std::countr_zero(first);
      uint32_t nonzero = 0, column = 0;
      bool well_formed = true;
      scan_line(at, end, nonzero, column, well_formed);
      take(nonzero, column, well_formed);
      continue;
    }
    // Counter c is not zero if the separator after it (its tab, or the line's end) is in nonzero_end.
    uint32_t nonzero = 0, column = 0;
    for (uint64_t t = tab & line; t != 0; t &= t - 1, ++column) {  // as many rounds as the scheme has tabs
      nonzero |= static_cast<uint32_t>((nonzero_end & t & -t) != 0) << column;
    }
    nonzero |= static_cast<uint32_t>((nonzero_end & line_end) != 0) << column;
    take(nonzero, column, column < kMaxCounters);
  }
  return p + (64 - std::countl_zero(newline));
}
#endif

}  // namespace
}  // namespace sampler::analysis::samples_line
