// Sampling plans (docs/formats.md, "Sampling plans"): the line codec every reader of a plan file uses.
//
// Part of the formats library's core: the runtime reads SAMPLER_PLAN with it at start-up, so it allocates nothing,
// never throws, reads no locale and calls no libc function. A plan file is text, one record per line, fields
// separated by one TAB:
//     sampler-plan<TAB>1                                 (line 1, exactly)
//     id<TAB>ID                                          (once, before any entry)
//     UNIT<TAB>SCHEME<TAB>SITE<TAB>PROBABILITY           (entries)
//     # comment                                          (and blank lines: ignored)
// parse_line() checks one line on its own; Reader adds the rules about where a line may stand. Neither sees
// repeated entries: the caller, which keeps the entries, refuses the same (unit, scheme, site) twice.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string_view>

namespace sampler::plan {

/// The first line of every plan file, without its newline.
inline constexpr char kHeader[] = "sampler-plan\t1";
/// The longest line a plan may have, in bytes, without its newline.
inline constexpr size_t kMaxLineBytes = 4096;
/// The longest plan id.
inline constexpr size_t kMaxIdBytes = 64;
/// Hex digits in a unit signature.
inline constexpr size_t kUnitSignatureDigits = 32;

enum class LineKind { header, id, entry, comment_or_blank, malformed };

/// One parsed line. The views point into the line given to parse_line().
struct Line {
  LineKind kind = LineKind::malformed;
  std::string_view id;      ///< LineKind::id
  std::string_view unit;    ///< LineKind::entry: 32 lower-case hex digits
  std::string_view scheme;  ///< LineKind::entry: a name of the scheme table (sections/scheme_table.h)
  uint32_t site = 0;        ///< LineKind::entry: the site's index in the unit's sites of that scheme
  double probability = 0;   ///< LineKind::entry: in [0, 1]
  const char* error = nullptr;  ///< LineKind::malformed: static English text, no trailing period
};

/// Parses one line, given without its '\n'. A '\r' is not stripped (it makes the line malformed).
Line parse_line(std::string_view line);

/// 1 to 64 characters of [0-9A-Za-z_-] (the alphabet of a run id).
bool valid_id(std::string_view id);

/// Parses a probability: a decimal number without sign (`0`, `1`, `0.001`, `.5`, `1e-6`, `2.5E-3`) whose value
/// is in [0, 1]. Up to 19 significant digits are read (further digits are dropped); the result is the nearest
/// double for 15 significant digits and exponents within +-22, within a few units in the last place otherwise.
bool parse_probability(std::string_view text, double& probability);

/// The file-level rules on top of parse_line(): the header on line 1, exactly one id before any entry.
class Reader {
 public:
  /// Parses the next line and checks where it stands: a misplaced line comes back malformed, with its error.
  Line next(std::string_view line);
  /// The line number of the line last given to next() (1-based).
  uint32_t line_number() const { return line_number_; }
  /// At the end of the file: nullptr when the file was a complete plan (header and id), else the error, which
  /// concerns the last line (or line 1 of an empty file).
  const char* finish() const;
  /// The plan's id, once seen (a view into the line that held it: copy it before that line goes).
  bool has_id() const { return has_id_; }

 private:
  uint32_t line_number_ = 0;
  bool has_header_ = false;
  bool has_id_ = false;
};

}  // namespace sampler::plan
