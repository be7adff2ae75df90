// sampler-run's library: run a program with sampling on, its report on a private descriptor, add the
// outcome subreport, upload it (gzip, API key) or spool it for a later run. The program's streams, signals and
// exit status are its own: the launcher writes nothing to them unless asked (--verbose).
#pragma once

#include <string>
#include <vector>

#include "launcher/settings.h"
#include "sections/diagnostics.h"

namespace sampler::launcher {

/// Runs `argv` (argv[0] looked up in PATH) and does everything around it; returns what main should return
/// (the program's exit status). When the program died of a signal, this does not return: it dies of the same
/// signal. Errors of sampler-run itself are reported on stderr: 127 or 126 when the program cannot be run, 2 when
/// the plan given (settings.plan) is no usable plan.
int launch(const LaunchSettings& settings, const std::vector<std::string>& argv);

/// --show-last: prints the last report sampler-run sent or spooled, and what became of it. Returns 0, or 1 when
/// there is none.
int show_last(const LaunchSettings& settings);

/// --recover NAME: the report of a run made without sampler-run, with %c in SAMPLER_FILE (docs/instrumenting.md,
/// "Counters in a file: %c"), whatever ended it: NAME itself when it holds a whole, final report (a normal exit, a
/// crash report), as sampler-run ends a report cut short; else the samples subreport of the counters file beside it,
/// NAME.counters, read as sampler-run reads its memfd. Problems go to `sink`, naming the file. False when the data
/// is wrong or missing: no report, or a counters file that is none or is damaged (`report` then holds what could be
/// read before the damage, if anything).
bool recover_report(const std::string& name, std::string& report, DiagnosticSink& sink);

}  // namespace sampler::launcher
