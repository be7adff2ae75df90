// Sampling plans learned from reports (`sampler-analyze plan`, docs/analysis.md "Sampling plans"): how often each
// site executes in a run, estimated from the samples of runs taken at known rates, and the per-site probabilities
// that spend a cost budget while giving every site a target number of expected samples per run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sections/diagnostics.h"
#include "sections/plan.h"
#include "sections/progress.h"
#include "sections/sites_index.h"

namespace sampler::analysis {

/// A site of a plan: (unit signature, scheme, the site's index in that unit and scheme).
using PlanKey = std::tuple<std::string, std::string, uint32_t>;

/// A plan file (docs/formats.md, "Sampling plans"), as the runs that used it need it.
struct KnownPlan {
  std::string id;
  std::string file;  ///< where it was read
  std::map<PlanKey, double> probabilities;
};

/// Reads the plan file `path` with the codec (sections/core/plan.h). Any malformed line makes it unusable: the
/// first problem goes to `sink` as FILE:LINE and false is returned.
bool read_plan_file(const std::string& path, KnownPlan& plan, DiagnosticSink& sink);

/// What the runs say of one site.
struct SiteUsage {
  double executions = 0;   ///< sum over the runs that could sample it of (samples / probability)
  double runs = 0;         ///< the runs that could sample it (probability above 0)
  double probability = 0;  ///< sum of its probability over those runs
  double seconds = 0;      ///< sum of those runs' lengths (the program's own CPU seconds, see UsageOptions)
  uint64_t samples = 0;    ///< samples taken, over those runs
};

/// The sites of one (unit, scheme) samples section.
struct SectionUsage {
  std::string unit, scheme;
  std::vector<SiteUsage> sites;
  /// Each site's function as its site information names it (name_functions()); empty when not known.
  std::vector<std::string> functions;
};

/// Every site the runs reported, in the order sections were first met.
struct Usage {
  std::vector<SectionUsage> sections;
  uint64_t runs = 0;       ///< runs taken in
  uint64_t left_out = 0;   ///< runs left out (named on the sink)
  double seconds = 0;           ///< their lengths summed: the program's own CPU time (UsageOptions::sample_seconds)
  double measured_seconds = 0;  ///< their lengths as the outcomes said (their samples included) or as given
  uint64_t samples = 0;         ///< their samples summed (every site of every section taken in)
  uint64_t floored = 0;         ///< runs whose samples' predicted cost reached kSampledShareCeiling of their length
};

/// A training run's own samples take part of its measured CPU time. Its length as the plan needs it, the
/// program's own time, is the measured time less samples × sample cost, but never below
/// (1 - kSampledShareCeiling) of the measured time: a larger correction says the sample cost given is above this
/// machine's, or the run was sampled so densely that its time says little of the program's.
inline constexpr double kSampledShareCeiling = 0.9;

/// The program's own CPU time of a run measured at `measured_seconds` that took `samples` samples of
/// `sample_seconds` each (docs/analysis.md, "Cost, in clearly stated units"); `floored` tells whether the floor
/// applied.
double program_seconds(double measured_seconds, uint64_t samples, double sample_seconds, bool& floored);

/// How read_usage() learns what it cannot read from a run.
struct UsageOptions {
  /// The uniform sparsity of runs whose report has neither an `outcome` with a sparsity nor a `plan` subreport.
  std::optional<double> sparsity;
  /// The length (CPU seconds) of runs whose report has no `outcome`: the program's own, taken as it is.
  std::optional<double> run_seconds;
  /// The CPU time of one sample in the training runs (PlanOptions::sample_seconds): a run's length measured by its
  /// outcome is taken less its samples' predicted cost (program_seconds). 0: lengths as measured.
  double sample_seconds = 0;
  /// The plans runs may name in their `plan` subreport, by id.
  const std::vector<KnownPlan>* plans = nullptr;
  Progress* progress = nullptr;
};

/// Reads `files` (report files, plain or gzip). A run is left out, with a warning naming its file, when its rate
/// or its length is unknown (no outcome and no option for it; a plan that is not among options.plans), or when
/// it cannot be read; a malformed samples line or a section whose line count differs from the first run's for
/// the same (unit, scheme) is an error (FILE:LINE) and leaves that run out. `bounds` and timestamps sections
/// are not counts of samples and are skipped.
Usage read_usage(const std::vector<std::string>& files, const UsageOptions& options, DiagnosticSink& sink);

/// Gives every section the site information in `sites` has for it its sites' functions (SectionUsage::functions).
/// Returns the sites left without one: their section is not in `sites`, or its sites there are not as many or
/// conflict between files.
size_t name_functions(Usage& usage, const SitesIndex& sites);

/// The constraints of a plan.
struct PlanOptions {
  double budget = 0.02;             ///< the share of a run's CPU time its samples may cost (0.02: 2 %)
  double sample_seconds = 30e-9;    ///< the CPU time of one sample
  /// The CPU time of one entry of a region's slow side that takes no sample (its sites checked one by one instead
  /// of the fast side's one comparison): what a site's weight costs the other sites of its region.
  double walk_seconds = 3e-9;
  /// The CPU time of one execution of a site on a fast side under a plan (its weight subtracted, the countdown
  /// tested); above 0, a function whose sites' executions at that cost alone take more than the budget is turned
  /// off: every one of its sites at probability 0 (docs/analysis.md, "Functions turned off"). 0: none is.
  double fast_seconds = 0;
  double target = 1;                ///< expected samples per run each site should get
  double max_probability = 1;       ///< no site above it
};

/// A plan and what it predicts.
struct Plan {
  std::vector<plan::Entry> entries;  ///< in the usage's order
  std::string id;                   ///< SHA-256 of the entry lines as the file has them (after the id line), hex
  double level = 0;                 ///< the water level: expected samples per run of every site below its cap
  double samples_per_second = 0;    ///< predicted samples per CPU second of the runs
  double walks_per_second = 0;      ///< predicted slow-side entries that take no sample, per CPU second
  double cost = 0;  ///< predicted share of the run's CPU time: samples and walks times their costs
  double mean_run_seconds = 0;      ///< the runs' mean length
  double uniform_cost = 0;  ///< the training runs' own share at their rates: their samples and the walks priced
  size_t sites = 0;         ///< sites in the plan
  size_t capped = 0;        ///< at the maximum probability
  size_t rare = 0;          ///< of those, below the target all the same (they execute too rarely)
  size_t below_target = 0;  ///< below the cap and below the target: the budget allows no more
  size_t unseen = 0;        ///< never seen executing (planned at their upper bound)
  size_t beside_hotter = 0; ///< sites whose function has a hotter site: their weight's walks are in their price
  size_t unseen_beside_hotter = 0;  ///< of those, never seen executing
  bool functions_known = false;     ///< some site's function was known: walks were predicted
  size_t unknown = 0;       ///< no run could sample them: not in the plan
  size_t off_functions = 0;  ///< functions turned off (PlanOptions::fast_seconds)
  size_t off_sites = 0;      ///< their sites, at probability 0
};

/// The plan of docs/analysis.md "The optimisation": every site s at probability min(max_probability, L / e_s), L
/// the largest level whose predicted cost is within the budget. e_s is the site's executions per run m_s (a site
/// never seen executing is taken at its 95 % upper bound, 3 / (sum of its probabilities)) scaled by its price:
/// (sample cost * x_s + walk cost * (h_s - x_s)) / (sample cost * x_s), x_s its executions per CPU second and h_s
/// those of the hottest site of its function (x_s when its function is not known): the slow-side entries its
/// weight causes in a region it shares with hotter code. Every site below the cap costs the same; with equal
/// prices, every one gets L expected samples (max-min fair). Sites no run could sample are left out of the plan
/// (they keep the uniform rate) and counted in `unknown`. With options.fast_seconds, the sites of a function whose
/// seen sites execute more than budget / fast_seconds times a CPU second are at probability 0, outside the level.
Plan make_plan(const Usage& usage, const PlanOptions& options);

/// Writes `plan` to `path` (through a temporary file renamed over it: a reader never sees half a plan). False
/// with `error` set when it cannot.
bool write_plan_file(const std::string& path, const Plan& plan, std::string& error);

/// The lines `sampler-analyze plan` prints on stderr: the runs, the sites, the level, the predicted cost.
std::string plan_summary(const Usage& usage, const Plan& plan, const PlanOptions& options, const std::string& path);

}  // namespace sampler::analysis
