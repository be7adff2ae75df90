// The runtime's settings: the environment variables of SPEC section 6, parsed once at start-up.
//
// The parse* functions are pure (tested with tables of cases); load_settings() reads the environment, removes
// the variables from it (so exec'd children do not write into the same report), opens the report destination,
// and prints one `sampler: SAMPLER_X: ...` line per invalid value. Every failure is safe: an invalid sampling
// value turns sampling off, an invalid destination turns the report off.
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
  bool verbose = false;    ///< SAMPLER_VERBOSE set
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
/// SAMPLER_REPORT_FD: a decimal descriptor number >= 0 (whether it is open is checked separately).
ParseStatus parse_descriptor(const char* text, int& fd);
/// SAMPLER_FILE: expands %p to `pid` and %% to %; any other % sequence, an empty name or a name longer than
/// `capacity - 1` is an error. On success `out` is NUL-terminated.
ParseStatus expand_file_name(const char* pattern, pid_t pid, char* out, size_t capacity);

/// Reads, removes and applies the environment variables; prints diagnostics (and, under SAMPLER_VERBOSE, each
/// decision) on stderr. Call once, single-threaded, at start-up.
Settings load_settings();

// print_line(), say() and verbose() are in log.h.

}  // namespace sampler::runtime
