// The command line shared by resolveSamples and resolveTimestamps (docs/tools.md): the same options, the same
// FILE and SECTION arguments, the same join; only the kind of section joined differs.
#pragma once

#include <array>

#include "sections/report.h"
#include "tool.h"

namespace sampler::tool {

/// The options of both resolve tools.
inline constexpr std::array kResolveOptions = {
    Option{"section", 0, "NAME", "read sites from ELF section NAME (default .debug_site_info)"},
    Option{"no-merge", 0, nullptr, "print repeated sections separately instead of merging them"},
};

/// Parses argv against `usage` (whose options are kResolveOptions), indexes the sites of every FILE, joins the
/// `kind` sections read on standard input with them, and returns the exit status.
int run_resolve(const Usage& usage, SampleSectionKind kind, int argc, char** argv);

}  // namespace sampler::tool
