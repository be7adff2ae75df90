// Sampling plans (docs/formats.md, "Sampling plans"): writing a plan file. Reading one line at a time is the
// allocation-free codec of sections/core/plan.h, which the runtime shares.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sections/core/plan.h"

namespace sampler::plan {

/// One entry of a plan: the chance that one execution of a site is sampled.
struct Entry {
  std::string unit;    ///< the unit signature, 32 lower-case hex digits
  std::string scheme;  ///< a scheme name of the scheme table
  uint32_t site = 0;   ///< the site's index in the (unit, scheme)'s sites order
  double probability = 0;  ///< in [0, 1]
};

/// Writes a plan: the header, the id line, one line per entry in the given order. The probability is written in
/// the shortest form that reads back as the same double (std::to_chars: no locale). The caller gives a valid id
/// (valid_id()) and valid, distinct entries; parse_line() reads every line this writes.
void write_plan(std::ostream& out, std::string_view id, const std::vector<Entry>& entries);

}  // namespace sampler::plan
