// The plan line codec (see sections/core/plan.h).
// Core code: no libc call (string_view is used only through data() and size(), whose comparisons would call
// memcmp), no allocation, no exceptions, no locale; safe in the runtime's start-up and crash paths.
#include "sections/core/plan.h"

#include "sections/scheme_table.h"

namespace sampler::plan {
namespace {

bool same(std::string_view a, const char* b, size_t b_size) {
  if (a.size() != b_size) return false;
  for (size_t i = 0; i < b_size; ++i)
    if (a.data()[i] != b[i]) return false;
  return true;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool known_scheme(std::string_view name) {
  for (const SchemeRow& row : kSchemeTable)
    if (same(name, row.name.data(), row.name.size())) return true;
  return false;
}

bool valid_unit(std::string_view unit) {
  if (unit.size() != kUnitSignatureDigits) return false;
  for (char c : unit)
    if (!is_digit(c) && !(c >= 'a' && c <= 'f')) return false;
  return true;
}

bool parse_site(std::string_view text, uint32_t& site) {
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > UINT32_MAX) return false;
  }
  site = static_cast<uint32_t>(value);
  return true;
}

/// Splits off the field before the next TAB (or the rest); `rest` becomes what follows the TAB.
std::string_view next_field(std::string_view& rest, bool& had_tab) {
  for (size_t i = 0; i < rest.size(); ++i)
    if (rest.data()[i] == '\t') {
      std::string_view field(rest.data(), i);
      rest = std::string_view(rest.data() + i + 1, rest.size() - i - 1);
      had_tab = true;
      return field;
    }
  std::string_view field = rest;
  rest = std::string_view();
  had_tab = false;
  return field;
}

/// Eight bytes of `text` as a little-endian word (the compiler makes it one load; no libc call).
uint64_t word_at(const char* text) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(text);
  return uint64_t{b[0]} | uint64_t{b[1]} << 8 | uint64_t{b[2]} << 16 | uint64_t{b[3]} << 24 | uint64_t{b[4]} << 32 |
         uint64_t{b[5]} << 40 | uint64_t{b[6]} << 48 | uint64_t{b[7]} << 56;
}

/// Whether 8 bytes are all lower-case hex digits, a word at a time: for a byte x below 0x80, x + (0x80 - lo)
/// has its high bit set when x >= lo, and x + (0x7f - hi) when x > hi; no sum carries into the next byte.
bool hex_digits8(uint64_t word) {
  constexpr uint64_t kHigh = 0x8080808080808080, kOnes = 0x0101010101010101;
  if ((word & kHigh) != 0) return false;
  uint64_t digit = (word + kOnes * (0x80 - '0')) & ~(word + kOnes * (0x7f - '9'));
  uint64_t letter = (word + kOnes * (0x80 - 'a')) & ~(word + kOnes * (0x7f - 'f'));
  return ((digit | letter) & kHigh) == kHigh;
}

/// The entry line as sampler-analyze writes it, read in one pass: true with `line` filled when `text` is a
/// well-formed entry, false for anything else, which parse_line() then reads field by field (and refuses with
/// its error). Every line it accepts parse_line() would accept with the same values.
bool parse_entry_quickly(std::string_view text, Line& line) {
  const char* p = text.data();
  size_t size = text.size();
  // Unit (32), TAB, scheme, TAB, site, TAB, probability: each field at least one byte.
  if (size < kUnitSignatureDigits + 6 || p[kUnitSignatureDigits] != '\t') return false;
  for (size_t i = 0; i < kUnitSignatureDigits; i += 8)
    if (!hex_digits8(word_at(p + i))) return false;
  size_t scheme = kUnitSignatureDigits + 1, at = 0;
  for (const SchemeRow& row : kSchemeTable) {  // names hold no TAB: the one followed by a TAB is the field
    const char* name = row.name.data();
    size_t length = row.name.size(), end = scheme + length;
    if (p[scheme] != name[0] || end >= size || p[end] != '\t') continue;
    // A name of 8 to 16 bytes as two words, its first 8 bytes and its last 8 (together, every byte).
    bool equal = length >= 8 && length <= 16
                     ? word_at(p + scheme) == word_at(name) && word_at(p + end - 8) == word_at(name + length - 8)
                     : same(std::string_view(p + scheme, length), name, length);
    if (equal) {
      at = end;
      break;
    }
  }
  if (at == 0) return false;
  size_t site = ++at;
  uint64_t value = 0;
  for (; at < size && is_digit(p[at]); ++at) {
    value = value * 10 + static_cast<uint64_t>(p[at] - '0');
    if (value > UINT32_MAX) return false;
  }
  if (at == site || at == size || p[at] != '\t') return false;
  ++at;  // parse_probability() refuses a further TAB, as it refuses any byte outside its grammar
  if (!parse_probability(std::string_view(p + at, size - at), line.probability)) return false;
  line.kind = LineKind::entry;
  line.unit = std::string_view(p, kUnitSignatureDigits);
  line.scheme = std::string_view(p + scheme, site - 1 - scheme);
  line.site = static_cast<uint32_t>(value);
  return true;
}

Line malformed(const char* error) {
  Line line;
  line.error = error;
  return line;
}

Line of_kind(LineKind kind) {
  Line line;
  line.kind = kind;
  return line;
}

}  // namespace

bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) return false;
  for (char c : id)
    if (!is_digit(c) && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && c != '_' && c != '-') return false;
  return true;
}

bool parse_probability(std::string_view text, double& probability) {
  if (text.size() == 1 && (text.data()[0] == '0' || text.data()[0] == '1')) {  // most of a plan's entries
    probability = text.data()[0] == '1' ? 1.0 : 0.0;
    return true;
  }
  const char* p = text.data();
  const char* end = p + text.size();
  // Significant digits into an integer, then one scaling by a power of ten (exact up to 10^22).
  uint64_t mantissa = 0;
  int significant = 0;
  int64_t exponent = 0;  // of the last digit kept
  int digits = 0;
  bool nonzero_seen = false;
  bool nonzero_dropped = false;  // so that 1.00000000000000000001 is not read as 1
  auto digit = [&](char c, bool fraction) {
    ++digits;
    if (c != '0') nonzero_seen = true;
    if (!nonzero_seen) {
      if (fraction) --exponent;
      return;
    }
    if (significant < 19) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
      ++significant;
      if (fraction) --exponent;
    } else {
      nonzero_dropped = nonzero_dropped || c != '0';
      if (!fraction) ++exponent;  // a dropped integer digit still scales
    }
  };
  for (; p < end && is_digit(*p); ++p) digit(*p, false);
  if (p < end && *p == '.') {
    ++p;
    for (; p < end && is_digit(*p); ++p) digit(*p, true);
  }
  if (digits == 0) return false;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool negative = false;
    if (p < end && (*p == '+' || *p == '-')) negative = *p++ == '-';
    int64_t written = 0;
    int exponent_digits = 0;
    for (; p < end && is_digit(*p); ++p, ++exponent_digits)
      if (written < 100000) written = written * 10 + (*p - '0');  // beyond: the value is 0 or too large anyway
    if (exponent_digits == 0) return false;
    exponent += negative ? -written : written;
  }
  if (p != end) return false;
  if (mantissa == 0) {
    probability = 0;
    return true;
  }
  // mantissa >= 1, so 10^exponent > 1 means a value above 1; and below 10^-345 every value rounds to 0.
  if (exponent > 0) return false;
  if (exponent + significant < -345) {
    probability = 0;
    return true;
  }
  static constexpr double kPowers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  double value = static_cast<double>(mantissa);
  int64_t down = -exponent;
  // Keep the value normal while scaling: divide by the remainder first, then by 10^22 steps.
  value /= kPowers[down % 22];
  for (down -= down % 22; down > 0; down -= 22) value /= 1e22;
  if (!(value <= 1.0) || (value == 1.0 && nonzero_dropped)) return false;
  probability = value;
  return true;
}

Line parse_line(std::string_view text) {
  if (text.size() > kMaxLineBytes) return malformed("line longer than 4096 bytes");
  Line entry;
  if (parse_entry_quickly(text, entry)) return entry;
  if (text.empty() || text.data()[0] == '#') return of_kind(LineKind::comment_or_blank);
  bool blank = true;
  for (size_t i = 0; blank && i < text.size(); ++i) blank = text.data()[i] == ' ' || text.data()[i] == '\t';
  if (blank) return of_kind(LineKind::comment_or_blank);

  std::string_view rest = text;
  bool had_tab = false;
  std::string_view first = next_field(rest, had_tab);
  if (same(first, "sampler-plan", 12)) {
    if (same(text, kHeader, sizeof kHeader - 1)) return of_kind(LineKind::header);
    return malformed("unsupported plan format (this reader knows `sampler-plan<TAB>1`)");
  }
  if (same(first, "id", 2)) {
    if (!had_tab) return malformed("id line without a TAB and an id");
    Line line = of_kind(LineKind::id);
    line.id = rest;
    if (!valid_id(rest)) return malformed("invalid plan id (1 to 64 characters of 0-9 A-Z a-z _ -)");
    return line;
  }

  Line line = of_kind(LineKind::entry);
  std::string_view fields[4];
  size_t count = 0;
  fields[count++] = first;
  while (had_tab) {
    if (count == 4) return malformed("entry with more than 4 TAB-separated fields");
    fields[count++] = next_field(rest, had_tab);
  }
  if (count != 4) return malformed("entry without 4 TAB-separated fields (unit, scheme, site, probability)");
  if (!valid_unit(fields[0])) return malformed("unit is not a signature of 32 lower-case hex digits");
  if (!known_scheme(fields[1])) return malformed("unknown scheme");
  if (!parse_site(fields[2], line.site)) return malformed("site is not a decimal index below 2^32");
  if (!parse_probability(fields[3], line.probability))
    return malformed("probability is not a decimal number in [0, 1]");
  line.unit = fields[0];
  line.scheme = fields[1];
  return line;
}

Line Reader::next(std::string_view text) {
  ++line_number_;
  Line line = parse_line(text);
  if (line.kind == LineKind::malformed) return line;
  if (!has_header_) {
    if (line.kind != LineKind::header) return malformed("not a sampler plan (line 1 must be `sampler-plan<TAB>1`)");
    has_header_ = true;
    return line;
  }
  switch (line.kind) {
    case LineKind::header:
      return malformed("header repeated");
    case LineKind::id:
      if (has_id_) return malformed("second id line");
      has_id_ = true;
      return line;
    case LineKind::entry:
      if (!has_id_) return malformed("entry before the id line");
      return line;
    default:
      return line;
  }
}

const char* Reader::finish() const {
  if (!has_header_) return "not a sampler plan (line 1 must be `sampler-plan<TAB>1`)";
  if (!has_id_) return "plan without an id line";
  return nullptr;
}

}  // namespace sampler::plan
