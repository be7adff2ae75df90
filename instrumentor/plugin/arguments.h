// The values of the plugin's arguments, as the drivers write them (-fplugin-arg-sampler-NAME=VALUE) and the plugin
// reads them: one check of each, which the drivers run on their own options (-fsampler-NAME=VALUE) and the plugin on
// its arguments, so that the plugin refuses what the drivers refuse, in the same words, rather than falling back
// to a default (a plugin loaded without the drivers, or by an older driver, is told what is wrong).
// Header-only: the drivers include it without linking the plugin.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "sections/scheme_table.h"

namespace sampler::plugin {

/// -fsampler-timestamps= / timestamps=: which timestamps a unit's schemes carry.
inline constexpr std::array<std::string_view, 4> kTimestampsValues = {"none", "first", "last", "both"};
/// -fsampler-countdown= / countdown=: region (one check per acyclic region) or site.
inline constexpr std::array<std::string_view, 2> kCountdownValues = {"region", "site"};

/// "invalid value 'VALUE' for OPTION (a, b, c)" if `value` is not one of `values`; nothing if it is.
template <size_t N>
std::optional<std::string> check_value(std::string_view option, std::string_view value,
                                       const std::array<std::string_view, N>& values) {
  std::string known;
  for (std::string_view v : values) {
    if (v == value) return std::nullopt;
    known += (known.empty() ? "" : ", ") + std::string(v);
  }
  return "invalid value '" + std::string(value) + "' for " + std::string(option) + " (" + known + ")";
}

/// -fsampler-max-pairs= / max-pairs=: a number of sites, 0 (no bound) to 999999999. Sets `max_pairs`, or returns
/// the message for `option`.
inline std::optional<std::string> parse_max_pairs(std::string_view option, std::string_view value,
                                                  unsigned& max_pairs) {
  if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string_view::npos)
    return "invalid value '" + std::string(value) + "' for " + std::string(option) +
           " (a number of sites, 0 to 999999999)";
  max_pairs = 0;
  for (char digit : value) max_pairs = max_pairs * 10 + static_cast<unsigned>(digit - '0');
  return std::nullopt;
}

/// "unknown instrumentation scheme 'NAME' in OPTION": walk_scheme_list()'s refusal, in the drivers' words.
inline std::string unknown_scheme(std::string_view name, std::string_view option) {
  return "unknown instrumentation scheme '" + std::string(name) + "' in " + std::string(option);
}

}  // namespace sampler::plugin
