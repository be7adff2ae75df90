// sampler-cc / sampler-c++: classification of the command line and the plan (see driver.h).
#include "driver.h"

#include "../plugin/arguments.h"
#include "sections/scheme_table.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace sampler::driver {
namespace {

using std::string;
using std::string_view;
// The checks the plugin runs on the arguments the drivers give it (plugin/arguments.h).
using sampler::plugin::check_value;
using sampler::plugin::kCountdownValues;
using sampler::plugin::kTimestampsValues;
using sampler::plugin::parse_max_pairs;
using sampler::plugin::unknown_scheme;

// Options whose argument is the next word (clang's Separate and JoinedOrSeparate options that take a file, a
// name or a value): the word after them is never an input.
constexpr std::array<string_view, 53> kSeparateArgument = {
    "-o", "-x", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-idirafter", "-iquote", "-iprefix",
    "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-L", "-l", "-MF", "-MT", "-MQ", "-MJ", "-Xlinker",
    "-Xassembler", "-Xpreprocessor", "-Xclang", "-Xarch_host", "-Xarch_device", "-arch", "-target", "-T", "-u",
    "-z", "-e", "-mllvm", "-aux-info", "-dyld-prefix", "--param", "-B", "-F", "-serialize-diagnostics",
    "--gcc-toolchain", "--sysroot", "-working-directory", "-isystem-after", "-cxx-isystem", "-resource-dir",
    "-ivfsoverlay", "-include-pch", "-Xopenmp-target", "-Xcuda-fatbinary", "-Xcuda-ptxas", "--config",
    "-rpath", "-stdlib++-isystem"};

bool starts_with(string_view s, string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool takes_separate_argument(string_view arg) {
  return std::find(kSeparateArgument.begin(), kSeparateArgument.end(), arg) != kSeparateArgument.end();
}

enum class InputKind { Source, Assembly, Other };

// The kind of an input, from `-x LANG` if one is in force, else from its name (clang's table, simplified).
InputKind input_kind(string_view name, string_view language) {
  string_view lang = language;
  if (lang.empty() || lang == "none") {
    auto dot = name.rfind('.');
    string_view ext = dot == string_view::npos ? "" : name.substr(dot + 1);
    if (name == "-") return InputKind::Other;  // stdin needs -x: clang refuses it otherwise
    static constexpr std::array<string_view, 12> sources = {"c", "i", "cc", "cp", "cxx", "cpp", "c++", "C",
                                                            "CC", "CPP", "ii", "CXX"};
    if (std::find(sources.begin(), sources.end(), ext) != sources.end()) return InputKind::Source;
    if (ext == "s" || ext == "S" || ext == "sx") return InputKind::Assembly;
    return InputKind::Other;
  }
  if (lang == "c" || lang == "c++" || lang == "cpp-output" || lang == "c++-cpp-output" || lang == "c-header" ||
      lang == "c++-header")
    return lang == "c-header" || lang == "c++-header" ? InputKind::Other : InputKind::Source;
  if (lang == "assembler" || lang == "assembler-with-cpp") return InputKind::Assembly;
  return InputKind::Other;
}

// The scalar-pairs switches the original named (its compare-constants, assign-into-field, ...): each is
// -fsampler-NAME / -fno-sampler-NAME, SAMPLER_CC_NAME=1 in the environment, -fplugin-arg-sampler-NAME to the plugin.
struct PairsSwitch {
  string_view name;         // as in the option and the plugin's argument
  string_view environment;  // the variable
  bool Settings::*field;
};
constexpr std::array<PairsSwitch, 4> kPairsSwitches = {{
    {"compare-constants", "SAMPLER_CC_COMPARE_CONSTANTS", &Settings::compare_constants},
    {"assign-into-field", "SAMPLER_CC_ASSIGN_INTO_FIELD", &Settings::assign_into_field},
    {"assign-into-index", "SAMPLER_CC_ASSIGN_INTO_INDEX", &Settings::assign_into_index},
    {"assign-across-pointer", "SAMPLER_CC_ASSIGN_ACROSS_POINTER", &Settings::assign_across_pointer},
}};

// The patterns that choose what to instrument (plugin/choice.h): -fsampler-NAME=PATTERN, repeatable; the
// environment's variable holds a comma-separated list; -fplugin-arg-sampler-NAME=PATTERN to the plugin, once each.
struct PatternOption {
  string_view name;
  string_view environment;
  sampler::plugin::Choice Settings::*choice;
  std::vector<string> sampler::plugin::Choice::*list;
};
constexpr std::array<PatternOption, 4> kPatternOptions = {{
    {"include-function", "SAMPLER_CC_INCLUDE_FUNCTION", &Settings::functions, &sampler::plugin::Choice::include},
    {"exclude-function", "SAMPLER_CC_EXCLUDE_FUNCTION", &Settings::functions, &sampler::plugin::Choice::exclude},
    {"include-file", "SAMPLER_CC_INCLUDE_FILE", &Settings::files, &sampler::plugin::Choice::include},
    {"exclude-file", "SAMPLER_CC_EXCLUDE_FILE", &Settings::files, &sampler::plugin::Choice::exclude},
}};

// `text` in lines of at most kHelpWidth characters, each after the help's indentation.
string help_lines(string_view text) {
  constexpr size_t kHelpWidth = 58;
  const string indent(30, ' ');
  string out, line;
  while (!text.empty()) {
    size_t space = text.find(' ');
    string_view word = text.substr(0, space);
    text = space == string_view::npos ? string_view() : text.substr(space + 1);
    if (!line.empty() && line.size() + 1 + word.size() > kHelpWidth) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + string(word);
  }
  return line.empty() ? out : out + indent + line + "\n";
}

// The help's list of schemes, from sections/scheme_table.h: the default, the others `all` includes, and those it
// leaves out (atoms: it instruments every access to shared memory, for concurrency bugs only; docs/decisions.md).
string schemes_help() {
  string others, left_out;
  for (const SchemeRow& row : kSchemeTable) {
    if (!row.instrumented || row.default_place != 0) continue;
    string& list = row.in_all ? others : left_out;
    list += (list.empty() ? "" : ", ") + string(row.name);
  }
  return help_lines("(default: " + default_scheme_list() + "; also " + others + ", and " + left_out +
                    ", which 'all' leaves out)");
}

}  // namespace

std::vector<string> split_response_file(const string& text) {
  std::vector<string> words;
  string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

Classification classify(const std::vector<string>& args) {
  Classification c;
  bool stop_early = false;  // -c, -S, -E, -fsyntax-only: no link
  bool dependencies_only = false, dependency_side_output = false, preprocess = false;
  bool version_or_verbose = false;
  bool sources = false;
  string language;
  bool end_of_options = false;
  for (size_t i = 0; i < args.size(); ++i) {
    string_view a = args[i];
    if (end_of_options || a == "-" || a.empty() || a[0] != '-') {
      ++c.inputs;
      InputKind kind = input_kind(a, language);
      if (a == "-" && (language == "c" || language == "c++" || language == "cpp-output"))
        kind = InputKind::Source;
      if (kind == InputKind::Source) sources = true;
      continue;
    }
    if (a == "--") {
      end_of_options = true;
      continue;
    }
    if (a.find("--build-id") != string_view::npos) c.user_build_id = true;  // -Wl,--build-id=none
    if (a == "-r" || a == "-Wl,-r" || a == "-Wl,--relocatable") c.relocatable = true;
    if (takes_separate_argument(a)) {
      if (i + 1 < args.size()) {
        if (args[i + 1].find("--build-id") != string::npos) c.user_build_id = true;  // -Xlinker --build-id
        if (a == "-x") language = args[i + 1];
        if (a == "-l") ++c.inputs;  // a library is an input of the link
        ++i;
      }
      continue;
    }
    if (starts_with(a, "-x")) {
      language = string(a.substr(2));
    } else if (a == "-c" || a == "-S") {
      stop_early = true;
    } else if (a == "-E") {
      stop_early = preprocess = true;
    } else if (a == "-fsyntax-only") {
      stop_early = preprocess = true;
    } else if (a == "-M" || a == "-MM") {
      dependencies_only = true;
    } else if (a == "-MD" || a == "-MMD") {
      dependency_side_output = true;
    } else if (starts_with(a, "-g")) {
      if (a == "-g0" || a == "-gno-column-info" || starts_with(a, "-gno-") || starts_with(a, "-gsplit") ||
          starts_with(a, "-gz") || starts_with(a, "-gcolumn") || a == "-gen-reproducer")
        continue;
      c.has_debug_option = true;
    } else if (a == "--version" || a == "-v" || a == "-dumpversion" || a == "-dumpmachine" ||
               starts_with(a, "-print-") || starts_with(a, "--print-") || a == "-help" || a == "--help-hidden") {
      version_or_verbose = true;
    } else if (starts_with(a, "-l") || starts_with(a, "-Wl,")) {
      if (starts_with(a, "-l")) ++c.inputs;
    }
  }
  if (dependencies_only && !dependency_side_output) preprocess = stop_early = true;
  c.preprocess_only = preprocess;
  c.info_only = version_or_verbose && c.inputs == 0;
  c.compiles = sources && !preprocess && !c.info_only;
  c.links = !stop_early && c.inputs > 0 && !c.info_only;
  return c;
}

// What --help prints: the driver's own options and variables; all others are clang's.
static string help_text(const char* program, bool cxx) {
  return string("Usage: ") + program + " [OPTIONS] FILE...\n" +
         "Compiles and links C" + (cxx ? "++" : "") +
         " with clang-19, instrumenting every translation unit for sampled bug feedback.\n"
         "Every option below is the driver's own; all others go to clang unchanged.\n\n"
         "  -fsampler-schemes=LIST      schemes to instrument, comma-separated, or 'all'\n" +
         schemes_help() +
         "  -fsampler-scheme=NAME       add one scheme (repeatable; the original's spelling): to\n"
         "                              -fsampler-schemes= if given, else instead of the default\n"
         "  -fsampler-timestamps=WHEN   none, first, last or both (default none)\n"
         "  -fsampler-countdown=CHECK   region (default): one countdown check per acyclic region\n"
         "                              of code, which runs an uninstrumented copy when no site in\n"
         "                              it can sample; site: one check at every site\n"
         "  -fsampler-max-pairs=N       scalar-pairs sites per function at most (default " +
         std::to_string(sampler::plugin::kDefaultMaxPairs) +
         ";\n"
         "                              0: no bound); beyond it the constants written least often\n"
         "                              go first, then the globals\n"
         "scalar-pairs compares the value assigned to a named variable of integer, enum or pointer\n"
         "type with 0 (NULL), the variable's old value, and the same-typed parameters, initialised\n"
         "locals and earlier globals. Wider, as the original's options of the same names:\n"
         "  -fsampler-compare-constants      also every integer constant written in the function\n"
         "  -fsampler-assign-into-field      also assignments into a structure's field\n"
         "  -fsampler-assign-into-index      also assignments into an array's element\n"
         "  -fsampler-assign-across-pointer  also assignments through a pointer\n"
         "  (-fno-sampler-NAME turns each off again)\n"
         "Which functions (all but the C and C++ libraries' by default); each option repeatable,\n"
         "'*' in a PATTERN matches any characters:\n"
         "  -fsampler-include-function=PATTERN  only the functions a PATTERN matches: the name, in C++\n"
         "                              the qualified name (ns::Class::method) or the symbol\n"
         "  -fsampler-exclude-function=PATTERN  not those; an exclusion wins over an inclusion, but\n"
         "                              '*' alone only leaves out what no inclusion names\n"
         "  -fsampler-include-file=PATTERN, -fsampler-exclude-file=PATTERN  the same by the file of\n"
         "                              the definition: its path as compiled if PATTERN has a '/',\n"
         "                              else its base name\n"
         "  #pragma sampler_exclude_function(NAME) in a source file leaves NAME out of its unit\n"
         "  -fno-sampler                compile without instrumentation (libsampler is still linked)\n"
         "  -fsampler                   undo -fno-sampler\n"
         "  -static-libsampler          link libsampler.a instead of libsampler.so\n"
         "  --help                      print this help and exit\n"
         "  --version                   print the driver's and clang's versions and exit\n\n"
         "Environment: SAMPLER_CC_SCHEMES, SAMPLER_CC_TIMESTAMPS, SAMPLER_CC_COUNTDOWN,\n"
         "SAMPLER_CC_MAX_PAIRS, SAMPLER_CC_COMPARE_CONSTANTS=1, SAMPLER_CC_ASSIGN_INTO_FIELD=1,\n"
         "SAMPLER_CC_ASSIGN_INTO_INDEX=1, SAMPLER_CC_ASSIGN_ACROSS_POINTER=1, SAMPLER_CC_DISABLE=1,\n"
         "SAMPLER_CC_STATIC_RUNTIME=1 (the command line wins), SAMPLER_CC_INCLUDE_FUNCTION,\n"
         "SAMPLER_CC_EXCLUDE_FUNCTION, SAMPLER_CC_INCLUDE_FILE, SAMPLER_CC_EXCLUDE_FILE (comma-separated\n"
         "patterns, added to the command line's), SAMPLER_CLANG / SAMPLER_CLANGXX (the compiler to\n"
         "run, default clang-19 / clang++-19).\n"
         "Instrumented programs run as usual; SAMPLER_SPARSITY=100 SAMPLER_FILE=report.%p.txt turns\n"
         "sampling on. See sampler-cc(1) and docs/instrumenting.md.\n";
}

// The arguments with each response file (@FILE) replaced by its words, recursively. A file that names itself
// (directly or through others) is not read again on that chain, as clang refuses recursive response files; and
// at most kMaxResponseFiles are read in all, so that files naming several others cannot make the work grow
// exponentially.
static std::vector<string> expand_response_files(
    const std::vector<string>& args, const std::function<std::optional<string>(const string&)>& read_file) {
  constexpr size_t kMaxResponseFiles = 1024;
  size_t files_read = 0;
  std::vector<string> expanded, chain;
  std::function<void(const string&)> expand = [&](const string& a) {
    if (a.size() > 1 && a[0] == '@' && files_read < kMaxResponseFiles &&
        std::find(chain.begin(), chain.end(), a) == chain.end()) {
      if (auto text = read_file(a.substr(1))) {
        ++files_read;
        chain.push_back(a);
        for (const string& w : split_response_file(*text)) expand(w);
        chain.pop_back();
        return;
      }
    }
    expanded.push_back(a);
  };
  for (const string& a : args) expand(a);
  return expanded;
}

// What the driver adds to clang's command line: the plugin and its settings where a unit is compiled, and the
// runtime and a build ID where a program or shared object is linked.
static void add_sampler_arguments(Plan& plan, const Layout& layout) {
  const Classification& c = plan.classification;
  const Settings& s = plan.settings;
  if (c.compiles && s.enabled && !s.schemes.empty()) {
    plan.argv.push_back("-fplugin=" + layout.plugin);
    plan.argv.push_back("-fpass-plugin=" + layout.plugin);
    plan.argv.push_back("-fplugin-arg-sampler-schemes=" + s.schemes);
    plan.argv.push_back("-fplugin-arg-sampler-timestamps=" + s.timestamps);
    plan.argv.push_back("-fplugin-arg-sampler-countdown=" + s.countdown);
    plan.argv.push_back("-fplugin-arg-sampler-max-pairs=" + std::to_string(s.max_pairs));
    for (const PairsSwitch& w : kPairsSwitches)
      if (s.*w.field) plan.argv.push_back("-fplugin-arg-sampler-" + string(w.name));
    for (const PatternOption& o : kPatternOptions)
      for (const string& pattern : (s.*o.choice).*o.list)
        plan.argv.push_back("-fplugin-arg-sampler-" + string(o.name) + "=" + pattern);
    // Sites are matched to the code by line and column: line tables at least, and columns always.
    if (!c.has_debug_option) plan.argv.push_back("-gline-tables-only");
    plan.argv.push_back("-gcolumn-info");
  }
  if (c.links && !c.relocatable) {
    if (!c.user_build_id) plan.argv.push_back("-Wl,--build-id");
    if (s.static_runtime) {
      plan.argv.push_back(layout.libdir + "/libsampler.a");
      plan.argv.push_back("-lpthread");
    } else {
      plan.argv.push_back("-L" + layout.libdir);
      if (!layout.system_libdir) plan.argv.push_back("-Wl,-rpath," + layout.libdir);
      // --push-state/--as-needed would drop libsampler from a program with no instrumented unit (-fno-sampler):
      // it is linked plainly, so that mixed builds always find the runtime.
      plan.argv.push_back("-lsampler");
    }
  }
}

Plan make_plan(const std::vector<string>& args, bool cxx, const Layout& layout,
               const std::function<const char*(const char*)>& getenv,
               const std::function<std::optional<string>(const string&)>& read_file) {
  Plan plan;
  const char* program = cxx ? "sampler-c++" : "sampler-cc";
  auto usage_error = [&](const string& text) {
    plan.exit_status = 2;
    plan.message = string(program) + ": error: " + text + "\n";
    return plan;
  };

  // Settings: defaults, then the environment, then the command line (the last occurrence wins).
  Settings& s = plan.settings;
  std::optional<string> schemes, timestamps, countdown, max_pairs;
  if (const char* e = getenv("SAMPLER_CC_SCHEMES"); e && *e) schemes = e;
  if (const char* e = getenv("SAMPLER_CC_TIMESTAMPS"); e && *e) timestamps = e;
  if (const char* e = getenv("SAMPLER_CC_COUNTDOWN"); e && *e) countdown = e;
  if (const char* e = getenv("SAMPLER_CC_MAX_PAIRS"); e && *e) max_pairs = e;
  if (const char* e = getenv("SAMPLER_CC_DISABLE"); e && *e && string_view(e) != "0") s.enabled = false;
  if (const char* e = getenv("SAMPLER_CC_STATIC_RUNTIME"); e && *e && string_view(e) != "0") s.static_runtime = true;
  for (const PairsSwitch& w : kPairsSwitches)
    if (const char* e = getenv(string(w.environment).c_str()); e && *e) s.*w.field = string_view(e) != "0";

  std::vector<std::pair<const PatternOption*, string>> patterns;  // as given, validated after --help
  std::vector<string> passed;  // the user's arguments minus the drivers' own
  std::vector<string> added_schemes;  // -fsampler-scheme=NAME, the original's spelling, once per scheme
  bool help = false, version = false;
  auto pairs_switch = [&](const string& a) {
    for (const PairsSwitch& w : kPairsSwitches) {
      if (a == "-fsampler-" + string(w.name)) return s.*w.field = true, true;
      if (a == "-fno-sampler-" + string(w.name)) return s.*w.field = false, true;
    }
    return false;
  };
  auto pattern_option = [&](const string& a) {
    for (const PatternOption& o : kPatternOptions)
      if (string prefix = "-fsampler-" + string(o.name) + "="; starts_with(a, prefix))
        return patterns.emplace_back(&o, a.substr(prefix.size())), true;
    return false;
  };
  for (const string& a : args) {
    if (pattern_option(a)) {
      continue;  // kept by pattern_option
    } else if (starts_with(a, "-fsampler-schemes=")) {
      schemes = a.substr(18);
    } else if (starts_with(a, "-fsampler-scheme=")) {
      added_schemes.push_back(a.substr(17));
    } else if (pairs_switch(a)) {
      continue;  // set by pairs_switch
    } else if (starts_with(a, "-fsampler-timestamps=")) {
      timestamps = a.substr(21);
    } else if (starts_with(a, "-fsampler-countdown=")) {
      countdown = a.substr(20);
    } else if (starts_with(a, "-fsampler-max-pairs=")) {
      max_pairs = a.substr(20);
    } else if (a == "-fno-sampler") {
      s.enabled = false;
    } else if (a == "-fsampler") {
      s.enabled = true;
    } else if (a == "-static-libsampler") {
      s.static_runtime = true;
    } else if (a == "--help") {
      help = true;
    } else if (a == "--version") {
      version = true;
      passed.push_back(a);
    } else {
      passed.push_back(a);
    }
  }
  if (help) {
    plan.exit_status = 0;
    plan.message = help_text(program, cxx);
    return plan;
  }

  // The schemes: validated here, so that a typo is one clear message rather than a failing build later.
  // -fsampler-scheme=NAME adds to -fsampler-schemes= (or SAMPLER_CC_SCHEMES); alone, as in the original, the
  // schemes it names are all there is.
  // The names and `all` as sections/scheme_table.h has them, each scheme once, in the order first named.
  std::vector<SchemeId> chosen;
  string wanted = schemes.value_or(added_schemes.empty() ? default_scheme_list() : "");
  for (const string& name : added_schemes) wanted += (wanted.empty() ? "" : ",") + name;
  string_view unknown;
  auto choose = [&chosen](SchemeId id) {
    if (std::find(chosen.begin(), chosen.end(), id) == chosen.end()) chosen.push_back(id);
  };
  if (!walk_scheme_list(wanted, choose, unknown))
    return usage_error(unknown_scheme(
        unknown, std::find(added_schemes.begin(), added_schemes.end(), unknown) != added_schemes.end()
                     ? "-fsampler-scheme=" + string(unknown)
                     : "-fsampler-schemes=" + schemes.value_or("")));
  for (SchemeId id : chosen) s.schemes += (s.schemes.empty() ? "" : ",") + string(scheme_row(id).name);
  s.timestamps = timestamps.value_or("none");
  if (auto error = check_value("-fsampler-timestamps", s.timestamps, kTimestampsValues))
    return usage_error(*error);
  s.countdown = countdown.value_or("region");
  if (auto error = check_value("-fsampler-countdown", s.countdown, kCountdownValues))
    return usage_error(*error);
  if (max_pairs)
    if (auto error = parse_max_pairs("-fsampler-max-pairs", *max_pairs, s.max_pairs))
      return usage_error(*error);

  // The patterns: the command line's, then each variable's list. An empty pattern matches nothing a function or
  // a file is named: a slip (`-fsampler-exclude-function=$UNSET`), refused rather than silently without effect.
  for (const auto& [option, pattern] : patterns) {
    if (pattern.empty())
      return usage_error("empty pattern in -fsampler-" + string(option->name) +
                         "= (a name; '*' matches any characters)");
    ((s.*option->choice).*option->list).push_back(pattern);
  }
  for (const PatternOption& o : kPatternOptions) {
    const char* e = getenv(string(o.environment).c_str());
    if (!e || !*e) continue;
    string_view list = e;
    for (size_t start = 0; start <= list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      string_view item = list.substr(start, comma - start);  // "a, b" is a and b: no name starts with a blank
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      if (item.empty())
        return usage_error("empty pattern in " + string(o.environment) + "='" + e +
                           "' (comma-separated patterns; '*' matches any characters)");
      ((s.*o.choice).*o.list).emplace_back(item);
      start = comma + 1;
    }
  }

  const char* compiler = getenv(cxx ? "SAMPLER_CLANGXX" : "SAMPLER_CLANG");
  plan.argv.emplace_back(compiler && *compiler ? compiler : (cxx ? "clang++-19" : "clang-19"));
  if (version) {
    plan.exit_status = 0;
    plan.message = string(program) + " (sampler) " + SAMPLER_VERSION + "\n";
    plan.print_clang_version = true;
    plan.argv.emplace_back("--version");
    return plan;
  }

  // Classify what clang will do, looking inside response files (which still go to clang as they are).
  plan.classification = classify(expand_response_files(passed, read_file));
  plan.argv.insert(plan.argv.end(), passed.begin(), passed.end());
  add_sampler_arguments(plan, layout);
  return plan;
}

}  // namespace sampler::driver
