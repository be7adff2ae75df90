// sampler-cc / sampler-c++: what the drivers decide, as a pure function of the command line and environment, so
// that the classification can be tested (and fuzzed) without running a compiler. main.cpp only executes the plan.
#pragma once

#include "../plugin/state.h"  // kDefaultMaxPairs: the plugin's default, which the help states
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sampler::driver {

/// Where the driver finds its parts; main.cpp fills it from the build tree or from the install prefix.
struct Layout {
  std::string plugin;      ///< the shared object loaded by clang as -fplugin= and -fpass-plugin=
  std::string libdir;      ///< holds libsampler.so and libsampler.a
  bool system_libdir = false;  ///< libdir is one the dynamic linker searches anyway: no -rpath
};

/// What the command line asks clang to do, found before anything is changed.
struct Classification {
  bool compiles = false;       ///< at least one C or C++ source is compiled to an object, assembly or IR
  bool links = false;          ///< the command ends in a link
  bool preprocess_only = false;   ///< -E, -M or -MM without -MD/-MMD, -fsyntax-only, -### is not one of these
  bool has_debug_option = false;  ///< the user gave a -g option other than -g0
  bool info_only = false;      ///< -print-*, -dump*, --version, -v without inputs: nothing is compiled
  int inputs = 0;              ///< every input file (sources, assembly, objects, libraries)
  bool user_build_id = false;  ///< the user chose a --build-id style (e.g. =none): theirs is kept
  bool relocatable = false;    ///< -r: a partial link, where no library belongs
};

/// Settings of the drivers' own options (command line over environment over defaults).
struct Settings {
  bool enabled = true;                ///< -fno-sampler turns instrumentation off (libsampler is still linked)
  std::string schemes;                ///< comma-separated, validated, `all` expanded
  std::string timestamps = "none";    ///< none, first, last or both
  std::string countdown = "region";   ///< region (amortized check per acyclic region) or site
  unsigned max_pairs = sampler::plugin::kDefaultMaxPairs;  ///< scalar-pairs sites per function at most; 0: all
  // The original's wider scalar-pairs, off by default: -fsampler-compare-constants, -fsampler-assign-into-field,
  // -fsampler-assign-into-index, -fsampler-assign-across-pointer (docs/instrumenting.md).
  bool compare_constants = false;
  bool assign_into_field = false;
  bool assign_into_index = false;
  bool assign_across_pointer = false;
  bool static_runtime = false;        ///< -static-libsampler
  /// Which functions to instrument: -fsampler-include-function=PATTERN and -fsampler-exclude-function= (and their
  /// SAMPLER_CC_* lists), the same for files; the command line's patterns, then the environment's.
  sampler::plugin::Choice functions, files;
};

/// The outcome: either an exit now (help, version, usage error, with the text to print) or clang's argv.
struct Plan {
  std::optional<int> exit_status;  ///< set: print `message` (to stdout if status 0, else stderr) and exit
  std::string message;
  bool print_clang_version = false;  ///< --version: after `message`, run `clang --version` too
  std::vector<std::string> argv;     ///< argv[0] is the compiler to exec
  std::vector<std::string> warnings;  ///< printed on stderr before the exec
  Classification classification;
  Settings settings;
};

/// Builds the plan. `cxx` selects sampler-c++; `getenv` reads the environment (tests pass their own);
/// `read_file` returns a response file's contents (nullopt if unreadable: clang then reports it).
Plan make_plan(const std::vector<std::string>& args, bool cxx, const Layout& layout,
               const std::function<const char*(const char*)>& getenv,
               const std::function<std::optional<std::string>(const std::string&)>& read_file);

/// Classifies clang arguments (response files already expanded). Exposed for the tests.
Classification classify(const std::vector<std::string>& args);

/// Splits a response file's text as GNU tools do: whitespace separates, quotes and backslashes escape.
std::vector<std::string> split_response_file(const std::string& text);

}  // namespace sampler::driver
