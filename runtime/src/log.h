// The runtime's messages on stderr: one `sampler: ...` line per write(2), from start-up code and from the crash
// handler alike (log_signal_safe.cpp: raw system calls and a stack buffer only).
#pragma once

#include <stddef.h>

namespace sampler::runtime {

/// SAMPLER_VERBOSE was set: explain each decision on stderr. Set once by initialisation.
extern bool g_verbose;
inline bool verbose() { return g_verbose; }

/// Writes one line "sampler: " + the concatenation of `parts` + "\n" to stderr with a single write(2); a line
/// longer than 1 KiB is cut. Null parts are skipped. SIGPIPE is held off (stderr may be a pipe without reader).
/// Async-signal-safe.
void print_line(const char* const* parts, size_t count);

/// print_line with up to six parts.
void say(const char* a, const char* b = nullptr, const char* c = nullptr, const char* d = nullptr,
         const char* e = nullptr, const char* f = nullptr);

}  // namespace sampler::runtime
