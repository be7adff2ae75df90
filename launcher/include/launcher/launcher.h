// sampler-run's library: run a program with sampling on, its report on a private descriptor, add the
// outcome subreport, upload it (gzip, API key) or spool it for a later run. The program's streams, signals and
// exit status are its own: the launcher writes nothing to them unless asked (--verbose).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sampler::launcher {

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
  std::string ca_file;                        ///< --ca-file: trust this CA (PEM) for an https collector
  uint64_t spool_max_bytes = 10u << 20;       ///< oldest spooled reports go first beyond this
  uint64_t spool_max_age_seconds = 7 * 86400;  ///< older spooled reports are dropped
  bool enabled = true;      ///< false: the user opted out; the program runs as if sampler-run were not there
  bool verbose = false;     ///< say on stderr what was sent, spooled or dropped
};

/// Reads "KEY = VALUE" lines ('#' comments) of a configuration file into `settings`; keys: enabled, upload,
/// api-key, app, version, sparsity, seed, spool, keep, upload-timeout-ms, spool-max-bytes, spool-max-age-days.
/// Returns false with `error` ("line N: ...") on a malformed line or value. A missing file is not an error.
/// With `private_file` (the default configuration), a file someone else could have written is not read:
/// `found` is false and `refused` says why.
bool read_config(const std::string& path, bool private_file, LaunchSettings& settings, bool& found,
                 std::string& error, std::string& refused);

/// Runs `argv` (argv[0] looked up in PATH) and does everything around it; returns what main should return
/// (the program's exit status). When the program died of a signal, this does not return: it dies of the same
/// signal. Errors of sampler-run itself (the program cannot be run) are reported on stderr: 127 or 126.
int launch(const LaunchSettings& settings, const std::vector<std::string>& argv);

/// --show-last: prints the last report sampler-run sent or spooled, and what became of it. Returns 0, or 1 when
/// there is none.
int show_last(const LaunchSettings& settings);

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

enum class UploadStatus { kSent, kRejected, kUnreachable };

/// POSTs a gzip report to URL/api/reports with "Authorization: APIKey KEY", within `timeout_ms`. kRejected: the
/// collector answered with a 4xx that retrying will not change (the report is dropped); kUnreachable: no
/// answer, 5xx, 408 or 429 (the report waits in the spool). `answer` gets the JSON answer or curl's error.
/// `ca_file`, when not empty, is the PEM file of the certificate authorities to trust for https (else the
/// system's).
UploadStatus upload_report(const std::string& url, const std::string& api_key, std::string_view gzip_body,
                           uint64_t timeout_ms, std::string& answer, const std::string& ca_file = {});

/// POSTs `body` to `url` with `headers` ("Name: value"), within `timeout_ms`, through libcurl (loaded when first
/// needed). True when an answer came: `status` is its HTTP status and `answer` its body (at most 4 KiB); false
/// when none did, with curl's error in `answer`. sampler-run's reports and sampler-symbols push both use it.
/// `ca_file` as for upload_report().
bool http_post(const std::string& url, const std::vector<std::string>& headers, std::string_view body,
               uint64_t timeout_ms, long& status, std::string& answer, const std::string& ca_file = {});

/// URL with `path` ("/api/reports") appended unless it already ends with it (trailing slashes dropped).
std::string api_endpoint(std::string url, std::string_view path);

/// gzip of `text` (the upload's body and the spool's files), one member: at gzip's default level up to 1 MiB, at
/// its fastest level above. Compression stops at `compress_until`: the rest of `text` goes in stored
/// (uncompressed) blocks, at copying speed, and `left_uncompressed` (when given) says how many bytes that was.
/// "" if zlib fails.
std::string gzip_text(std::string_view text, std::chrono::steady_clock::time_point compress_until,
                      size_t* left_uncompressed = nullptr);

/// The GNU build ID of the ELF file at `path`, in hex, or "" without one.
std::string read_build_id(const std::string& path);

/// The instrumented libraries `program` loads at start-up with environment `envp`: (path, build ID in hex or "")
/// of each shared object the dynamic loader maps for it (as ldd lists them) that carries site information
/// (.debug_site_info). Libraries the program dlopen()s later are not known. Remembered in `cache_dir` (none when
/// empty) per program and LD_LIBRARY_PATH, and used again while the program and those libraries are unchanged.
std::vector<std::pair<std::string, std::string>> instrumented_libraries(const std::string& program,
                                                                        char* const* envp,
                                                                        const std::string& cache_dir);

}  // namespace sampler::launcher
