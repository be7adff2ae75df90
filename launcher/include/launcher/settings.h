// What sampler-run is told: options, the environment and the configuration file (docs/collection.md,
// "sampler-run"), and where it keeps its files by default.
#pragma once

#include <cstdint>
#include <string>

namespace sampler::launcher {

/// The longest --interval (a year), in seconds.
inline constexpr uint64_t kMaxIntervalSeconds = 365 * 86400;

/// Everything sampler-run can be told, from options, the environment and the configuration file, in that order
/// of precedence (docs/collection.md, "sampler-run").
struct LaunchSettings {
  std::string app;
  std::string version;
  std::string upload_url;   ///< "" : do not upload (only --keep, and --show-last)
  std::string api_key;
  std::string keep_dir;     ///< "" : keep no copy
  std::string sparsity = "100";
  std::string seed;         ///< "" : a random seed, recorded in the outcome
  std::string spool_dir;    ///< where reports wait when the collector cannot be reached
  std::string state_dir;    ///< where the last report is kept for --show-last
  uint64_t upload_timeout_ms = 2000;          ///< the most the program's exit is delayed by uploading
  uint64_t interval_seconds = 0;  ///< --interval: an interim report from the shared counters this often (0: none)
  std::string ca_file;                        ///< --ca-file: trust this CA (PEM) for an https collector
  std::string plan;         ///< --plan, SAMPLER_PLAN, `plan`: the sampling plan to give; "": the served one, if any
  bool no_plan = false;     ///< --no-plan: no plan at all, neither given nor served
  uint64_t spool_max_bytes = 10u << 20;       ///< oldest spooled reports go first beyond this
  uint64_t spool_max_age_seconds = 7 * 86400;  ///< older spooled reports are dropped
  bool enabled = true;      ///< false: the user opted out; the program runs as if sampler-run were not there
  bool verbose = false;     ///< say on stderr what was sent, spooled or dropped
};

/// Reads "KEY = VALUE" lines ('#' comments) of a configuration file into `settings`; keys: enabled, upload,
/// api-key, app, version, sparsity, seed, spool, keep, ca-file, plan, upload-timeout-ms, interval, spool-max-bytes,
/// spool-max-age-days.
/// Returns false with `error` ("line N: ...") on a malformed line or value. A missing file is not an error.
/// With `private_file` (the default configuration), a file someone else could have written is not read:
/// `found` is false and `refused` says why.
bool read_config(const std::string& path, bool private_file, LaunchSettings& settings, bool& found,
                 std::string& error, std::string& refused);

/// Where sampler-run keeps its files by default: the configuration file ($XDG_CONFIG_HOME/sampler/run.conf, else
/// ~/.config/sampler/run.conf), the state directory ($XDG_CACHE_HOME/sampler, else ~/.cache/sampler) and the spool
/// (its spool/). Each only under a directory of the user's that no one else can write (launcher/src/private_files.h):
/// "" when there is none, and `why` says what was refused.
struct UserDirs {
  std::string config_file;
  std::string state_dir;
  std::string spool_dir;
  std::string why;
};
UserDirs default_user_dirs();

/// Says `message` on stderr ("sampler-run: ..."), control characters escaped, when settings.verbose.
void say(const LaunchSettings& settings, const std::string& message);

}  // namespace sampler::launcher
