// Sampling plans (docs/formats.md, "Sampling plans"): checking a whole plan file, all or nothing, as sampler-run
// does before it gives a plan to a program and the collector does before it stores one. Each line is read with
// the codec the runtime uses (sections/core/plan.h); on top of it, the same (unit, scheme, site) twice is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sampler::plan {

/// What check_plan() learns of a valid plan.
struct Summary {
  std::string id;      ///< the plan's id (its `id` line)
  size_t entries = 0;  ///< entry lines
};

/// Checks the text of a whole plan file: the header on line 1, one id before any entry, every line well-formed and
/// at most kMaxLineBytes, no (unit, scheme, site) twice. True with `summary` filled when the plan is usable; else
/// false, with `line` (1-based) the line at fault and `error` what is wrong with it.
bool check_plan(std::string_view text, Summary& summary, uint64_t& line, std::string& error);

}  // namespace sampler::plan
