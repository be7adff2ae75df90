// The AST action's arguments (ast_arguments.h).
#include "ast_arguments.h"

#include <cstring>
#include <string_view>
#include <tuple>
#include <utility>

#include "arguments.h"

namespace sampler::plugin::ast {

namespace {

// The original's wider scalar-pairs (compare-constants, assign-into-field, ...): each argument sets its switch.
bool set_switch(const std::string& arg, UnitState& settings) {
  const std::pair<const char*, bool UnitState::*> switches[] = {
      {"compare-constants", &UnitState::compare_constants},
      {"assign-into-field", &UnitState::assign_into_field},
      {"assign-into-index", &UnitState::assign_into_index},
      {"assign-across-pointer", &UnitState::assign_across_pointer}};
  for (const auto& [name, field] : switches)
    if (arg == name) return settings.*field = true, true;
  return false;
}

// include-function=PATTERN, exclude-function=, include-file=, exclude-file= (choice.h): each adds its pattern;
// with an empty one it is no argument of the plugin's.
bool add_pattern(const std::string& arg, UnitState& settings) {
  const std::tuple<const char*, Choice*, std::vector<std::string> Choice::*> kinds[] = {
      {"include-function=", &settings.functions, &Choice::include},
      {"exclude-function=", &settings.functions, &Choice::exclude},
      {"include-file=", &settings.files, &Choice::include},
      {"exclude-file=", &settings.files, &Choice::exclude}};
  for (const auto& [prefix, choice, list] : kinds) {
    size_t length = std::strlen(prefix);
    if (arg.size() > length && arg.compare(0, length, prefix) == 0) {
      (choice->*list).push_back(arg.substr(length));
      return true;
    }
  }
  return false;
}

}  // namespace

UnitState default_settings() {
  UnitState settings;
  for (size_t i = 0; i < kSchemeCount; ++i)
    if (kSchemeTable[i].default_place != 0) settings.schemes.add(static_cast<SchemeId>(i));
  return settings;
}

std::optional<std::string> parse_arguments(const std::vector<std::string>& args, UnitState& settings) {
  for (const std::string& arg : args) {
    std::string_view value = arg;
    if (value.substr(0, 8) == "schemes=") {
      settings.schemes = SchemeSet();
      std::string_view unknown;
      if (!walk_scheme_list(value.substr(8), [&](SchemeId id) { settings.schemes.add(id); }, unknown))
        return unknown_scheme(unknown, "-fplugin-arg-sampler-" + arg);
    } else if (value.substr(0, 11) == "timestamps=") {
      settings.timestamps = arg.substr(11);
      if (auto error = check_value("-fplugin-arg-sampler-timestamps", settings.timestamps, kTimestampsValues))
        return error;
    } else if (value.substr(0, 10) == "countdown=") {
      settings.countdown = arg.substr(10);
      if (auto error = check_value("-fplugin-arg-sampler-countdown", settings.countdown, kCountdownValues))
        return error;
    } else if (value.substr(0, 10) == "max-pairs=") {
      if (auto error = parse_max_pairs("-fplugin-arg-sampler-max-pairs", value.substr(10), settings.max_pairs))
        return error;
    } else if (!set_switch(arg, settings) && !add_pattern(arg, settings)) {
      return "unknown argument '" + arg + "'";
    }
  }
  return std::nullopt;
}

}  // namespace sampler::plugin::ast
