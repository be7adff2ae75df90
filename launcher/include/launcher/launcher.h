// sampler-run's library: run a program with sampling on, its report on a private descriptor, add the
// outcome subreport, upload it (gzip, API key) or spool it for a later run. The program's streams, signals and
// exit status are its own: the launcher writes nothing to them unless asked (--verbose).
#pragma once

#include <string>
#include <vector>

#include "launcher/settings.h"

namespace sampler::launcher {

/// Runs `argv` (argv[0] looked up in PATH) and does everything around it; returns what main should return
/// (the program's exit status). When the program died of a signal, this does not return: it dies of the same
/// signal. Errors of sampler-run itself are reported on stderr: 127 or 126 when the program cannot be run, 2 when
/// the plan given (settings.plan) is no usable plan.
int launch(const LaunchSettings& settings, const std::vector<std::string>& argv);

/// --show-last: prints the last report sampler-run sent or spooled, and what became of it. Returns 0, or 1 when
/// there is none.
int show_last(const LaunchSettings& settings);

}  // namespace sampler::launcher
