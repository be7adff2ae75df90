// Sampling plans on the users' machines (docs/collection.md, "Sampling plans"): the plan sampler-run gives the
// program (SAMPLER_PLAN), checked before the program starts; the collector's current plan of the application and
// release, fetched after an upload whose answer names a plan other than the cached one, and cached for later runs;
// and the `plan` subreport of a report sampler-run writes itself from the shared counters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "launcher/settings.h"

namespace sampler::launcher {

/// The largest plan file read (a plan for 10^6 sites takes about 60 MB).
inline constexpr size_t kMaxPlanBytes = 64u << 20;

/// Reads and checks the plan file `path` (all or nothing, as the runtime reads it) and returns its id. False with
/// `line` (0 when the file cannot be read) and `error` when it is no usable plan.
bool check_plan_file(const std::string& path, std::string& id, uint64_t& line, std::string& error);

/// The served plan cached for the collector, application and release of `settings` (a file under the state
/// directory's plans/), or "" when there is no state directory or no upload URL.
std::string served_plan_path(const LaunchSettings& settings);

/// The plan a run gets: its file (an absolute path) and id; an empty path for none.
struct ChosenPlan {
  std::string path;
  std::string id;
};

/// The plan for this run: none with --no-plan; else the one given (--plan, SAMPLER_PLAN or the configuration's
/// `plan`); else the cached served plan, when it is a usable plan (else none, and -v says why). False only when
/// the plan given is no usable plan: `error` is then the diagnostic, "'FILE':LINE: error: MESSAGE" (not escaped
/// yet: the file name is the user's).
bool choose_plan(const LaunchSettings& settings, ChosenPlan& chosen, std::string& error);

/// After an upload the collector answered with `answer`: when it names a current plan ("plan": "ID") other than the
/// cached one, fetches GET /api/plans/ID within `timeout_ms`, checks it and caches it; when it says there is none
/// ("plan": null), drops the cached one; without a "plan" member, changes nothing.
void refresh_served_plan(const LaunchSettings& settings, std::string_view answer, uint64_t timeout_ms);

/// The `plan` subreport (docs/formats.md): the plan's id and the uniform sparsity in force beside it.
std::string format_plan_subreport(std::string_view id, std::string_view sparsity);

}  // namespace sampler::launcher
