// The runtime's settings: the environment variables of docs/instrumenting.md section 2, parsed once at start-up.
//
// The parse* functions are pure (tested with tables of cases); load_settings() reads the environment, removes
// the variables from it (so exec'd children do not write into the same report), opens the report destination,
// and prints one `sampler: SAMPLER_X: ...` line per invalid value. Every failure is safe: an invalid sampling
// value turns sampling off, an invalid destination turns the report off.
//
// The rules that keep the runtime from being turned against the program or its user (docs/decisions.md):
//  - A program running with privileges its user does not have (AT_SECURE: setuid, setgid, file capabilities)
//    obeys none of the variables, as glibc's secure_getenv() would not return them: they come from the less
//    privileged user. They are still removed from the environment.
//  - The program's descriptors are never changed or closed: SAMPLER_REPORT_FD is duplicated at start-up and the
//    report is written to the duplicate.
//  - SAMPLER_FILE is opened without following a symbolic link, created with mode 0600 (a crash report holds the
//    process's address-space layout, as a core dump does), and never truncated while another process holds it
//    (an flock() taken before truncating and kept until the end) nor when it belongs to another user.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"

namespace sampler::runtime {

struct Settings {
  bool sampling = false;   ///< SAMPLER_SPARSITY set and valid (and SAMPLER_SEED valid if set)
  double sparsity = 0;     ///< mean opportunities per sample, >= 1
  bool seeded = false;     ///< SAMPLER_SEED given: reproducible sampling
  uint64_t seed = 0;
  int report_fd = -1;      ///< open destination of the report, or -1 for no report
  /// SAMPLER_FILE's name when it names a regular file (static storage), else null: interim reports replace the
  /// file by this name (runtime_state.h, write_interim_report).
  const char* report_path = nullptr;
  uint32_t interval_seconds = 0;  ///< SAMPLER_INTERVAL: seconds between interim reports, 0 for none
  /// The shared counters' mapping (shared_counters.h), mapped read-write and shared; null for none: SAMPLER_SHARED_FD's,
  /// or with %c in SAMPLER_FILE the counters file beside the report (open_counters_file).
  unsigned char* shared_base = nullptr;
  uint64_t shared_size = 0;
  /// %c: the counters file's name (static storage) and the runtime's descriptor of it (locked, close-on-exec); null
  /// and -1 otherwise. A normal exit removes the file once the report is whole (report.cpp, finish_report).
  const char* counters_path = nullptr;
  int counters_fd = -1;
  bool verbose = false;    ///< SAMPLER_VERBOSE set
  bool plan = false;       ///< SAMPLER_PLAN read and in force (plan.h): sampling on, on the fixed-point clock
};

/// Outcome of parsing one value. `error` is a static English phrase describing what was expected.
struct ParseStatus {
  bool ok;
  const char* error;
};

/// SAMPLER_SPARSITY: a finite decimal number >= 1 (fractions allowed, e.g. "2.5"), nothing else around it.
ParseStatus parse_sparsity(const char* text, double& sparsity);
/// SAMPLER_SEED: an integer in decimal, 0x hexadecimal or 0 octal (a leading '-' is allowed), within 64 bits.
ParseStatus parse_seed(const char* text, uint64_t& seed);
/// SAMPLER_INTERVAL: a whole number of seconds from 1 to 1000000000, in decimal, nothing else around it.
ParseStatus parse_interval(const char* text, uint32_t& seconds);
/// SAMPLER_REPORT_FD: a decimal descriptor number >= 0 (whether it is open is checked separately).
ParseStatus parse_descriptor(const char* text, int& fd);
/// What the % sequences of SAMPLER_FILE expand to.
struct FileNameValues {
  pid_t pid;          ///< %p
  const char* host;   ///< %h: the host name (a '/' in it becomes '_': the name stays in its directory)
  uint64_t seconds;   ///< %t: seconds since the epoch
};

/// SAMPLER_SHARED_FD: maps the descriptor's file (a regular file such as a memfd, between one page and 1 GiB:
/// kSharedMinBytes, kSharedMaxBytes) shared and read-write; the descriptor itself is left as it is. False with
/// `error` set when it cannot.
ParseStatus map_shared_descriptor(int fd, unsigned char*& base, uint64_t& size);

/// SAMPLER_FILE: expands %p, %h, %t and %% (to %), and %c to nothing, setting `*continuous` (when given): the
/// counters go to a file mapping beside the report (LLVM_PROFILE_FILE's continuous mode). Any other % sequence, an
/// empty name or a name longer than `capacity - 1` is an error. On success `out` is NUL-terminated.
ParseStatus expand_file_name(const char* pattern, const FileNameValues& values, char* out, size_t capacity,
                             bool* continuous = nullptr);

/// %c in SAMPLER_FILE: creates or replaces `report_name`.counters by the report file's rules (no symbolic link,
/// mode 0600, the user's own, one name, an flock() held for the process's life), sizes it to kCountersFileBytes (shared_counters.h)
/// and maps it as SAMPLER_SHARED_FD's memfd is mapped. False, having said why on stderr, when it cannot; the report
/// is then written as without %c.
bool open_counters_file(const char* report_name, bool verbose, Settings& settings);

/// Reads, removes and applies the environment variables; prints diagnostics (and, under SAMPLER_VERBOSE, each
/// decision) on stderr. Call once, single-threaded, at start-up. `secure`: the process runs with privileges its
/// user does not have (getauxval(AT_SECURE)); every variable is then removed and ignored.
Settings load_settings(bool secure);

// print_line(), say() and verbose() are in log.h.

}  // namespace sampler::runtime
