// The AST action's arguments (-fplugin-arg-sampler-NAME[=VALUE], as the drivers write them): read into the
// settings each unit's state starts from, checked as strictly as the drivers check their options (arguments.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "state.h"

namespace sampler::plugin::ast {

/// The settings of a plugin loaded without arguments: sampler-cc's default schemes (sections/scheme_table.h),
/// everything else as UnitState has it.
UnitState default_settings();

/// Reads `args` into `settings`. Returns the message for the first argument refused (an unknown argument, scheme,
/// countdown or timestamps value, a bad number), nothing when all are read.
std::optional<std::string> parse_arguments(const std::vector<std::string>& args, UnitState& settings);

}  // namespace sampler::plugin::ast
