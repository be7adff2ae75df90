// Sampling plans (docs/instrumenting.md, "Sampling plans"): SAMPLER_PLAN read at start-up, the weights it gives
// applied to each unit at its registration, and the `plan` subreport that says which plan a run used.
//
// The file is read whole and checked before anything is used (all or nothing: a run's plan id means exactly that
// plan): the sampler::plan codec (sections/core/plan.h) checks each line. Its entries are kept, sorted, in memory
// mapped for them (bounded by the file's size, itself at most kMaxPlanBytes), so that a unit registered later
// (dlopen) gets its weights too.
//
// The clock under a plan (sampler/abi.h, ABI version 3): fixed point, 2^-48 nat per unit; a site of probability p
// weighs round(-ln(1 - p) * 2^48) (p = 1: kCertainWeight, above any countdown), and the bank's countdowns are
// Exp(1) draws times 2^48 (sampling.cpp), so that each execution of a site samples independently with probability p.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "report_writer.h"
#include "sampler/abi.h"

namespace sampler::runtime {

/// Which plan a run uses, for the `plan` subreport: set once at start-up, read by the report paths (the crash
/// path too).
struct PlanIdentity {
  bool in_force = false;
  char id[65] = {};        ///< 1 to 64 characters (sections/core/plan.h)
  char sparsity[64] = {};  ///< SAMPLER_SPARSITY as given, empty when unset
};
extern PlanIdentity g_plan_identity;

/// The largest plan file the runtime reads.
constexpr uint64_t kMaxPlanBytes = uint64_t{64} << 20;
/// One clock unit is 2^-48 nat.
constexpr double kClockUnitsPerNat = 0x1p48;
/// The weight of a site sampled at every execution: 2^62, the countdown's largest value (sampling.cpp's kNever).
constexpr int64_t kCertainWeight = int64_t{1} << 62;

/// The weight of probability p in [0, 1] on the fixed-point clock.
int64_t weight_of_probability(double p);

/// Reads the plan at `path` (SAMPLER_PLAN). `sparsity_text`: SAMPLER_SPARSITY as given, or null when unset (sites
/// the plan does not name then never sample). True if the plan is in force; otherwise one line on stderr says why
/// (naming the file, and the line for a malformed one) and sampling stays uniform. Call once, at start-up.
bool load_plan(const char* path, const char* sparsity_text, double sparsity, bool verbose);

/// True once load_plan() succeeded.
bool plan_in_force();

/// Sets the weights and thresholds of a unit of ABI version 3 or later (sampler/abi.h) under the plan in force;
/// does nothing without a plan or for an older unit (whose sites then weigh one clock unit each).
void apply_plan(sampler_unit& unit);

/// The unit's thresholds from its weights (set) and what each bounds (sampler/abi.h, `threshold_bounds`): each is
/// at least the weight of any path its check covers, saturated at 2^62 (above any countdown under a plan). A unit of
/// version 3, or one whose bounds are malformed from some threshold on, gets 2^62 there: its sites then each check
/// their own weight, as the code of version 3 expects under a plan. Part of apply_plan().
void compute_thresholds(sampler_unit& unit);

/// Writes the `plan` subreport (docs/formats.md section 3) when a plan is in force. Async-signal-safe.
void write_plan_subreport(ReportWriter& out);

}  // namespace sampler::runtime
