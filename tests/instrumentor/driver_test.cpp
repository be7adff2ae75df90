// The drivers' decisions (instrumentor/driver/driver.h): what each kind of command line gets, and that no
// command line, however odd, crashes the classification.
#include "driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "../plugin/arguments.h"
#include "sections/scheme_table.h"

namespace sampler::driver {
namespace {

using Args = std::vector<std::string>;

const Layout kLayout{"/p/lib/sampler/sampler-plugin.so", "/p/lib", false};

struct Fixture {
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> files;
  Plan plan(const Args& args, bool cxx = false) {
    return make_plan(
        args, cxx, kLayout,
        [this](const char* name) -> const char* {
          auto it = env.find(name);
          return it == env.end() ? nullptr : it->second.c_str();
        },
        [this](const std::string& path) -> std::optional<std::string> {
          auto it = files.find(path);
          if (it == files.end()) return std::nullopt;
          return it->second;
        });
  }
};

bool has(const Plan& p, const std::string& arg) { return std::find(p.argv.begin(), p.argv.end(), arg) != p.argv.end(); }
bool instruments(const Plan& p) { return has(p, "-fplugin=" + kLayout.plugin); }
bool links_runtime(const Plan& p) { return has(p, "-lsampler") || has(p, "/p/lib/libsampler.a"); }

TEST(Driver, CompileOnlyGetsThePluginAndLineTablesButNoRuntime) {
  Fixture f;
  Plan p = f.plan({"-c", "-O2", "a.c", "-o", "a.o"});
  ASSERT_FALSE(p.exit_status);
  EXPECT_EQ(p.argv[0], "clang-19");
  // The user's arguments come first, in order and unchanged.
  EXPECT_EQ(Args(p.argv.begin() + 1, p.argv.begin() + 6), (Args{"-c", "-O2", "a.c", "-o", "a.o"}));
  EXPECT_TRUE(instruments(p));
  EXPECT_TRUE(has(p, "-fpass-plugin=" + kLayout.plugin));
  EXPECT_TRUE(has(p, "-gline-tables-only"));
  EXPECT_TRUE(has(p, "-fplugin-arg-sampler-schemes=branches,returns,scalar-pairs,function-entries"));
  EXPECT_FALSE(links_runtime(p));
  EXPECT_FALSE(has(p, "-Wl,--build-id"));
}

TEST(Driver, UserDebugOptionIsKept) {
  Fixture f;
  Plan p = f.plan({"-c", "-g3", "a.c"});
  EXPECT_FALSE(has(p, "-gline-tables-only"));
  EXPECT_TRUE(has(p, "-gcolumn-info"));
  EXPECT_TRUE(has(f.plan({"-c", "-g0", "a.c"}), "-gline-tables-only"));
}

TEST(Driver, LinkGetsBuildIdAndRuntime) {
  Fixture f;
  Plan p = f.plan({"a.o", "b.o", "-o", "prog"});
  EXPECT_FALSE(instruments(p));
  EXPECT_TRUE(has(p, "-Wl,--build-id"));
  EXPECT_TRUE(has(p, "-lsampler"));
  EXPECT_TRUE(has(p, "-L/p/lib"));
  EXPECT_TRUE(has(p, "-Wl,-rpath,/p/lib"));
  Plan both = f.plan({"a.c", "-o", "prog"});
  EXPECT_TRUE(instruments(both));
  EXPECT_TRUE(links_runtime(both));
  Plan stat = f.plan({"-static-libsampler", "a.o"});
  EXPECT_TRUE(has(stat, "/p/lib/libsampler.a"));
  EXPECT_FALSE(has(stat, "-static-libsampler"));
  EXPECT_FALSE(has(stat, "-lsampler"));
}

TEST(Driver, UserLinkChoicesAreKept) {
  Fixture f;
  Plan none = f.plan({"a.o", "-Wl,--build-id=none"});
  EXPECT_FALSE(has(none, "-Wl,--build-id"));
  EXPECT_TRUE(links_runtime(none));
  EXPECT_FALSE(has(f.plan({"a.o", "-Xlinker", "--build-id=sha1"}), "-Wl,--build-id"));
  // A partial link (-r) gets no library: it is not a program yet.
  Plan partial = f.plan({"-r", "a.o", "b.o", "-o", "ab.o"});
  EXPECT_FALSE(links_runtime(partial));
  EXPECT_FALSE(has(partial, "-Wl,--build-id"));
}

TEST(Driver, PreprocessingAndDependenciesAreUntouched) {
  Fixture f;
  for (const Args& args : {Args{"-E", "a.c"}, Args{"-M", "a.c"}, Args{"-MM", "a.c", "-MF", "a.d"},
                           Args{"-fsyntax-only", "a.c"}, Args{"-E", "-x", "c", "-"}}) {
    Plan p = f.plan(args);
    EXPECT_EQ(Args(p.argv.begin() + 1, p.argv.end()), args) << args[0];
  }
  // -MD is a side output of a real compile.
  EXPECT_TRUE(instruments(f.plan({"-MD", "-c", "a.c"})));
}

TEST(Driver, AssemblyAndInformationalCommandsGetNothingToCompile) {
  Fixture f;
  EXPECT_FALSE(instruments(f.plan({"-c", "a.s"})));
  EXPECT_FALSE(instruments(f.plan({"-c", "-x", "assembler-with-cpp", "a.c"})));
  for (const Args& args : {Args{"-v"}, Args{"-dumpversion"}, Args{"-print-prog-name=ld"}, Args{}}) {
    Plan p = f.plan(args);
    EXPECT_EQ(Args(p.argv.begin() + 1, p.argv.end()), args);
  }
}

TEST(Driver, ArgumentsOfOptionsAreNotInputs) {
  Fixture f;
  // "-o x.c" names an output, "-include a.c" a header: neither is a source to compile.
  Classification c = classify({"-c", "-o", "x.c", "-include", "h.c", "a.s"});
  EXPECT_FALSE(c.compiles);
  EXPECT_EQ(c.inputs, 1);
  EXPECT_TRUE(classify({"-x", "c", "file.txt", "-c"}).compiles);
  EXPECT_TRUE(classify({"-xc++", "file.txt", "-c"}).compiles);
  EXPECT_FALSE(classify({"-x", "c", "a.txt", "-x", "none", "b.txt", "-c", "-E"}).compiles);
}

TEST(Driver, ResponseFilesAreReadForClassificationAndPassedAsTheyAre) {
  Fixture f;
  f.files["args"] = "-c 'my file.c' -o \"out put.o\"\n@more";
  f.files["more"] = "-O2";
  Plan p = f.plan({"@args"});
  EXPECT_TRUE(has(p, "@args"));
  EXPECT_TRUE(instruments(p));
  EXPECT_FALSE(links_runtime(p));
  EXPECT_EQ(split_response_file("a 'b c' \"d\\\"e\" f\\ g"), (Args{"a", "b c", "d\"e", "f g"}));
  // A missing response file goes to clang, which reports it.
  EXPECT_TRUE(has(f.plan({"@missing", "-c", "a.c"}), "@missing"));
  f.files["self"] = "@self";  // recursion is bounded
  f.plan({"@self"});
  // Files that each name several others would take exponential work with a depth bound alone (a fuzzer's
  // input did): a file is not read again on its own chain, and 1024 files are read at most.
  int reads = 0;
  Plan wide = make_plan({"@a", "-c", "x.c"}, false, kLayout, [](const char*) -> const char* { return nullptr; },
                        [&reads](const std::string&) -> std::optional<std::string> {
                          ++reads;
                          return std::string("@a @b @c @d @e @f @g @h -O2");
                        });
  EXPECT_LE(reads, 1024);
  EXPECT_TRUE(instruments(wide));
}

TEST(Driver, OwnOptionsAndEnvironment) {
  Fixture f;
  Plan off = f.plan({"-fno-sampler", "a.c"});
  EXPECT_FALSE(instruments(off));
  EXPECT_TRUE(links_runtime(off));
  EXPECT_FALSE(has(off, "-fno-sampler"));
  EXPECT_TRUE(has(f.plan({"-fsampler-schemes=all", "-c", "a.c"}),
                  "-fplugin-arg-sampler-schemes=function-entries,branches,returns,scalar-pairs,float-kinds,bounds,"
                  "g-object-unref,coverage"));
  // atoms only by name: `all` leaves it out.
  EXPECT_TRUE(has(f.plan({"-fsampler-schemes=all,atoms", "-c", "a.c"}),
                  "-fplugin-arg-sampler-schemes=function-entries,branches,returns,scalar-pairs,float-kinds,bounds,"
                  "g-object-unref,coverage,atoms"));
  EXPECT_TRUE(has(f.plan({"-fsampler-timestamps=last", "-c", "a.c"}), "-fplugin-arg-sampler-timestamps=last"));
  Plan bad = f.plan({"-fsampler-schemes=branches,nope", "-c", "a.c"});
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_NE(bad.message.find("unknown instrumentation scheme 'nope'"), std::string::npos);
  EXPECT_EQ(f.plan({"-fsampler-timestamps=often", "a.c"}).exit_status, 2);
  Plan every = f.plan({"-fsampler-schemes=coverage,branches,coverage", "-c", "a.c"});
  EXPECT_TRUE(every.warnings.empty());
  EXPECT_TRUE(has(every, "-fplugin-arg-sampler-schemes=coverage,branches"));
  EXPECT_TRUE(has(f.plan({"-c", "a.c"}), "-fplugin-arg-sampler-countdown=region"));
  EXPECT_TRUE(has(f.plan({"-fsampler-countdown=site", "-c", "a.c"}), "-fplugin-arg-sampler-countdown=site"));
  EXPECT_EQ(f.plan({"-fsampler-countdown=sometimes", "a.c"}).exit_status, 2);
  // The bound on scalar-pairs sites per function: the plugin's default unless given; 0 is no bound.
  EXPECT_TRUE(has(f.plan({"-c", "a.c"}),
                  "-fplugin-arg-sampler-max-pairs=" + std::to_string(sampler::plugin::kDefaultMaxPairs)));
  EXPECT_TRUE(has(f.plan({"-fsampler-max-pairs=0", "-c", "a.c"}), "-fplugin-arg-sampler-max-pairs=0"));
  EXPECT_TRUE(has(f.plan({"-fsampler-max-pairs=50000", "-c", "a.c"}), "-fplugin-arg-sampler-max-pairs=50000"));
  for (const char* bad_bound : {"-fsampler-max-pairs=", "-fsampler-max-pairs=-1", "-fsampler-max-pairs=12x",
                                "-fsampler-max-pairs=99999999999999999999"}) {
    Plan refused = f.plan({bad_bound, "-c", "a.c"});
    EXPECT_EQ(refused.exit_status, 2) << bad_bound;
    EXPECT_NE(refused.message.find("-fsampler-max-pairs"), std::string::npos) << bad_bound;
  }
  EXPECT_NE(f.plan({"--help"}).message.find("-fsampler-max-pairs=N"), std::string::npos);

  f.env["SAMPLER_CC_COUNTDOWN"] = "site";
  EXPECT_TRUE(has(f.plan({"-c", "a.c"}), "-fplugin-arg-sampler-countdown=site"));
  EXPECT_TRUE(has(f.plan({"-fsampler-countdown=region", "-c", "a.c"}), "-fplugin-arg-sampler-countdown=region"));
  f.env["SAMPLER_CC_MAX_PAIRS"] = "300";
  EXPECT_TRUE(has(f.plan({"-c", "a.c"}), "-fplugin-arg-sampler-max-pairs=300"));
  EXPECT_TRUE(has(f.plan({"-fsampler-max-pairs=7", "-c", "a.c"}), "-fplugin-arg-sampler-max-pairs=7"));
  f.env["SAMPLER_CC_MAX_PAIRS"] = "lots";
  EXPECT_EQ(f.plan({"-c", "a.c"}).exit_status, 2);
  f.env.erase("SAMPLER_CC_MAX_PAIRS");
  f.env["SAMPLER_CC_SCHEMES"] = "returns";
  f.env["SAMPLER_CLANG"] = "/opt/clang";
  EXPECT_TRUE(has(f.plan({"-c", "a.c"}), "-fplugin-arg-sampler-schemes=returns"));
  EXPECT_TRUE(has(f.plan({"-fsampler-schemes=branches", "-c", "a.c"}), "-fplugin-arg-sampler-schemes=branches"));
  EXPECT_EQ(f.plan({"-c", "a.c"}).argv[0], "/opt/clang");
  EXPECT_EQ(f.plan({"-c", "a.cc"}, true).argv[0], "clang++-19");
  f.env["SAMPLER_CC_DISABLE"] = "1";
  EXPECT_FALSE(instruments(f.plan({"-c", "a.c"})));
}

// The original's scalar-pairs options: each off by default, on from the command line or the environment (the
// command line wins both ways), handed to the plugin as its own argument; documented in --help.
TEST(Driver, ScalarPairsSwitches) {
  Fixture f;
  const std::pair<const char*, const char*> switches[] = {
      {"compare-constants", "SAMPLER_CC_COMPARE_CONSTANTS"},
      {"assign-into-field", "SAMPLER_CC_ASSIGN_INTO_FIELD"},
      {"assign-into-index", "SAMPLER_CC_ASSIGN_INTO_INDEX"},
      {"assign-across-pointer", "SAMPLER_CC_ASSIGN_ACROSS_POINTER"}};
  for (const auto& [name, variable] : switches) {
    std::string option = std::string("-fsampler-") + name, plugin = std::string("-fplugin-arg-sampler-") + name;
    EXPECT_FALSE(has(f.plan({"-c", "a.c"}), plugin)) << name;
    Plan on = f.plan({option, "-c", "a.c"});
    EXPECT_TRUE(has(on, plugin)) << name;
    EXPECT_FALSE(has(on, option)) << name;  // the driver's own: not clang's
    EXPECT_FALSE(has(f.plan({option, "-fno-sampler-" + std::string(name), "-c", "a.c"}), plugin)) << name;
    EXPECT_FALSE(has(f.plan({option, "-E", "a.c"}), plugin)) << name;  // nothing compiled: no plugin
    EXPECT_NE(f.plan({"--help"}).message.find(option), std::string::npos) << name;
    f.env[variable] = "1";
    EXPECT_TRUE(has(f.plan({"-c", "a.c"}), plugin)) << name;
    EXPECT_FALSE(has(f.plan({"-fno-sampler-" + std::string(name), "-c", "a.c"}), plugin)) << name;
    f.env[variable] = "0";
    EXPECT_FALSE(has(f.plan({"-c", "a.c"}), plugin)) << name;
    f.env.erase(variable);
  }
  // Each is its own: one asked for turns on no other.
  Plan field = f.plan({"-fsampler-assign-into-field", "-c", "a.c"});
  EXPECT_FALSE(has(field, "-fplugin-arg-sampler-assign-into-index"));
  EXPECT_FALSE(has(field, "-fplugin-arg-sampler-compare-constants"));
}

// -fsampler-scheme=NAME, the original's spelling: repeatable; alone it names every scheme, beside
// -fsampler-schemes= (or SAMPLER_CC_SCHEMES) it adds to them.
TEST(Driver, SchemeOptionOfTheOriginal) {
  Fixture f;
  EXPECT_TRUE(has(f.plan({"-fsampler-scheme=branches", "-c", "a.c"}), "-fplugin-arg-sampler-schemes=branches"));
  EXPECT_TRUE(has(f.plan({"-fsampler-scheme=branches", "-fsampler-scheme=scalar-pairs", "-c", "a.c"}),
                  "-fplugin-arg-sampler-schemes=branches,scalar-pairs"));
  EXPECT_TRUE(has(f.plan({"-fsampler-scheme=bounds", "-fsampler-schemes=returns", "-c", "a.c"}),
                  "-fplugin-arg-sampler-schemes=returns,bounds"));
  EXPECT_TRUE(has(f.plan({"-fsampler-scheme=returns", "-fsampler-scheme=returns", "-c", "a.c"}),
                  "-fplugin-arg-sampler-schemes=returns"));
  Plan bad = f.plan({"-fsampler-scheme=nope", "-c", "a.c"});
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_NE(bad.message.find("unknown instrumentation scheme 'nope' in -fsampler-scheme=nope"), std::string::npos)
      << bad.message;
  EXPECT_FALSE(has(f.plan({"-fsampler-scheme=branches", "-c", "a.c"}), "-fsampler-scheme=branches"));
  EXPECT_NE(f.plan({"--help"}).message.find("-fsampler-scheme=NAME"), std::string::npos);
  f.env["SAMPLER_CC_SCHEMES"] = "coverage";
  EXPECT_TRUE(
      has(f.plan({"-fsampler-scheme=branches", "-c", "a.c"}), "-fplugin-arg-sampler-schemes=coverage,branches"));
}

// Choosing what to instrument: each pattern option, repeated, goes to the plugin once per pattern, in order, the
// environment's comma-separated lists after the command line's; an empty pattern is a usage error.
TEST(Driver, ChoosingFunctionsAndFiles) {
  Fixture f;
  const std::pair<const char*, const char*> options[] = {{"include-function", "SAMPLER_CC_INCLUDE_FUNCTION"},
                                                         {"exclude-function", "SAMPLER_CC_EXCLUDE_FUNCTION"},
                                                         {"include-file", "SAMPLER_CC_INCLUDE_FILE"},
                                                         {"exclude-file", "SAMPLER_CC_EXCLUDE_FILE"}};
  for (const auto& [name, variable] : options) {
    std::string option = std::string("-fsampler-") + name + "=";
    std::string plugin = std::string("-fplugin-arg-sampler-") + name + "=";
    auto patterns = [&](const Plan& p) {
      Args out;
      for (const std::string& a : p.argv)
        if (a.rfind(plugin, 0) == 0) out.push_back(a.substr(plugin.size()));
      return out;
    };
    EXPECT_EQ(patterns(f.plan({"-c", "a.c"})), Args{}) << name;
    Plan one = f.plan({option + "codec_*", "-c", "a.c"});
    EXPECT_EQ(patterns(one), Args{"codec_*"}) << name;
    EXPECT_FALSE(has(one, option + "codec_*")) << name;  // the driver's own: not clang's
    EXPECT_EQ(patterns(f.plan({option + "b", "-c", option + "ns::A::*", "a.c", option + "src/*.c"})),
              (Args{"b", "ns::A::*", "src/*.c"}))
        << name;
    EXPECT_EQ(patterns(f.plan({option + "x", "-E", "a.c"})), Args{}) << name;  // nothing compiled: no plugin
    EXPECT_EQ(patterns(f.plan({option + "x", "-fno-sampler", "-c", "a.c"})), Args{}) << name;
    Plan empty = f.plan({option, "-c", "a.c"});
    EXPECT_EQ(empty.exit_status, 2) << name;
    EXPECT_EQ(empty.message.rfind("sampler-cc: error: empty pattern in " + option, 0), 0u) << empty.message;
    EXPECT_NE(f.plan({"--help"}).message.find(option + "PATTERN"), std::string::npos) << name;
    EXPECT_NE(f.plan({"--help"}).message.find(variable), std::string::npos) << name;

    // The environment: comma-separated, blanks around a pattern left out, after the command line's.
    f.env[variable] = "codec_*, ns::Codec::encode ,\tz";
    EXPECT_EQ(patterns(f.plan({"-c", "a.c"})), (Args{"codec_*", "ns::Codec::encode", "z"})) << name;
    EXPECT_EQ(patterns(f.plan({option + "first", "-c", "a.c"})), (Args{"first", "codec_*", "ns::Codec::encode", "z"}))
        << name;
    f.env[variable] = "";  // empty: as if unset
    EXPECT_EQ(patterns(f.plan({"-c", "a.c"})), Args{}) << name;
    for (const char* bad : {"a,,b", ",a", "a,", " , a", ","}) {
      f.env[variable] = bad;
      Plan refused = f.plan({"-c", "a.c"});
      EXPECT_EQ(refused.exit_status, 2) << name << " '" << bad << "'";
      EXPECT_NE(refused.message.find(std::string("empty pattern in ") + variable + "='" + bad + "'"), std::string::npos)
          << refused.message;
    }
    f.env[variable] = "a,,b";
    EXPECT_EQ(f.plan({"--help"}).exit_status, 0) << name;  // --help whatever the environment holds
    f.env.erase(variable);
  }
  // The four are independent of one another.
  Plan both = f.plan({"-fsampler-include-function=main", "-fsampler-exclude-file=*.h", "-c", "a.c"});
  EXPECT_TRUE(has(both, "-fplugin-arg-sampler-include-function=main"));
  EXPECT_TRUE(has(both, "-fplugin-arg-sampler-exclude-file=*.h"));
  EXPECT_FALSE(has(both, "-fplugin-arg-sampler-exclude-function=main"));
  EXPECT_FALSE(has(both, "-fplugin-arg-sampler-include-file=*.h"));
}

// The rules the plugin applies (plugin/choice.h), as docs/instrumenting.md section 0 states them.
TEST(Choice, Wildcards) {
  using sampler::plugin::wildcard_match;
  EXPECT_TRUE(wildcard_match("codec_encode", "codec_encode"));
  EXPECT_FALSE(wildcard_match("codec_encode", "codec_encoder"));
  EXPECT_FALSE(wildcard_match("codec", "codec_encode"));  // the whole name, not a part
  EXPECT_TRUE(wildcard_match("*", ""));
  EXPECT_TRUE(wildcard_match("*", "ns::Codec::encode"));
  EXPECT_TRUE(wildcard_match("codec_*", "codec_"));
  EXPECT_TRUE(wildcard_match("*_fast", "crc32_fast"));
  EXPECT_TRUE(wildcard_match("*::encode", "ns::Codec::encode"));
  EXPECT_FALSE(wildcard_match("*::encode", "encode"));
  EXPECT_TRUE(wildcard_match("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(wildcard_match("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(wildcard_match("a**c", "ac"));
  EXPECT_TRUE(wildcard_match("src/*", "src/lib/a.c"));  // '*' crosses '/'
  EXPECT_FALSE(wildcard_match("operator[]", "operator["));
  EXPECT_TRUE(wildcard_match("Box<*>::get", "Box<int, char>::get"));
  EXPECT_FALSE(wildcard_match("", "a"));
  // No exponential backtracking: many stars against a long text that does not match.
  EXPECT_FALSE(wildcard_match("*a*a*a*a*a*a*a*a*a*a*b", std::string(10000, 'a')));
}

TEST(Choice, Files) {
  using sampler::plugin::file_matches;
  EXPECT_TRUE(file_matches("codec.c", "codec.c"));
  EXPECT_TRUE(file_matches("codec.c", "src/codec.c"));  // no '/': the base name
  EXPECT_TRUE(file_matches("codec.c", "/home/u/src/codec.c"));
  EXPECT_TRUE(file_matches("*.h", "./helper.h"));
  EXPECT_FALSE(file_matches("*codec*", "src/codec/x.c"));  // the base name only
  EXPECT_TRUE(file_matches("src/*.c", "src/codec.c"));  // a '/': the path as compiled
  EXPECT_TRUE(file_matches("src/*.c", "./src/codec.c"));
  EXPECT_FALSE(file_matches("src/*.c", "lib/src/codec.c"));
  EXPECT_TRUE(file_matches("*/src/*.c", "/home/u/lib/src/codec.c"));
  EXPECT_FALSE(file_matches("*/codec.c", "codec.c"));
  EXPECT_TRUE(file_matches("/usr/share/bison/*", "/usr/share/bison/yacc.c"));
}

TEST(Choice, IncludeAndExclude) {
  using sampler::plugin::Choice;
  auto chosen = [](const Choice& c, const std::string& name) {
    return c.chosen([&](const std::string& pattern) { return sampler::plugin::wildcard_match(pattern, name); });
  };
  Choice none;
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(chosen(none, "f"));
  Choice out{{}, {"codec_*"}};
  EXPECT_FALSE(chosen(out, "codec_encode"));
  EXPECT_TRUE(chosen(out, "main"));
  Choice only{{"codec_*", "main"}, {}};  // an include pattern given: only what one matches
  EXPECT_TRUE(chosen(only, "codec_encode"));
  EXPECT_TRUE(chosen(only, "main"));
  EXPECT_FALSE(chosen(only, "parse"));
  Choice except{{"codec_*"}, {"codec_init"}};  // an exclusion wins over an inclusion
  EXPECT_TRUE(chosen(except, "codec_encode"));
  EXPECT_FALSE(chosen(except, "codec_init"));
  EXPECT_FALSE(chosen(except, "main"));
  Choice original{{"main"}, {"*"}};  // the original's -finclude-function=main -fexclude-function='*'
  EXPECT_TRUE(chosen(original, "main"));
  EXPECT_FALSE(chosen(original, "parse"));
  Choice nothing{{}, {"*"}};
  EXPECT_FALSE(chosen(nothing, "main"));
  Choice star_in{{"*"}, {"codec_encode"}};  // the original's -fexclude-function=f -finclude-function='*'
  EXPECT_FALSE(chosen(star_in, "codec_encode"));
  EXPECT_TRUE(chosen(star_in, "main"));
}

TEST(Driver, HelpAndVersion) {
  Fixture f;
  Plan help = f.plan({"--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_NE(help.message.find("-fsampler-schemes=LIST"), std::string::npos);
  Plan version = f.plan({"--version"});
  EXPECT_EQ(version.exit_status, 0);
  EXPECT_TRUE(version.print_clang_version);
  EXPECT_EQ(version.message.rfind("sampler-cc (sampler) ", 0), 0u);
}

// Odd command lines: random words from a vocabulary of options, options missing their argument, empty strings,
// response files and bytes. The classification must never crash and must keep every user argument.
TEST(Driver, OddCommandLinesNeverCrash) {
  Fixture f;
  f.files["r"] = "-c \"unterminated";
  const Args vocabulary = {"-c", "-E", "-S", "-o", "-x", "c", "c++", "none", "-M", "-MD", "-MF", "-", "a.c",
                           "b.cc", "c.s", "d.o", "@r", "@", "", "-g", "-g0", "--", "-fno-sampler", "-include",
                           "-Wl,-z", "-l", "m", "-###", "-v", "-fsampler-schemes=", "-fsampler-schemes=all",
                           "\xff\xfe", "-I", "-fsyntax-only", "-static-libsampler", "-xassembler", "-MM",
                           "-fsampler-exclude-function=", "-fsampler-include-file=*.c"};
  std::mt19937 random(12345);
  for (int round = 0; round < 20000; ++round) {
    Args args;
    size_t n = random() % 8;
    for (size_t i = 0; i < n; ++i) args.push_back(vocabulary[random() % vocabulary.size()]);
    Plan p = f.plan(args, round % 2);
    if (p.exit_status) continue;
    for (const std::string& a : args) {
      bool own = a.rfind("-fsampler", 0) == 0 || a == "-fno-sampler" || a == "-static-libsampler";
      if (!own) {
        EXPECT_TRUE(has(p, a)) << "lost argument '" << a << "'";
      }
    }
  }
}

// The help, docs/instrumenting.md and sampler-cc(1) name the schemes as sections/scheme_table.h has them: its
// default list, the others `all` includes, and those it leaves out.
std::string read_text(const char* path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string table_names(bool (*wanted)(const SchemeRow&), const char* separator) {
  std::string names;
  for (const SchemeRow& row : kSchemeTable)
    if (wanted(row)) names += (names.empty() ? "" : separator) + std::string(row.name);
  return names;
}
bool other_in_all(const SchemeRow& row) { return row.instrumented && row.in_all && row.default_place == 0; }
bool left_out_of_all(const SchemeRow& row) { return row.instrumented && !row.in_all; }

TEST(SchemeTable, TheHelpNamesTheTablesSchemes) {
  std::string help = Fixture().plan({"--help"}).message;
  help = std::regex_replace(help, std::regex("\n +"), " ");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(help, m, std::regex(R"(\(default: ([a-z,-]+); also ([a-z, -]+), and ([a-z, -]+), )"
                                                    R"(which 'all' leaves out\))")))
      << help;
  EXPECT_EQ(m[1], default_scheme_list());
  EXPECT_EQ(m[2], table_names(other_in_all, ", "));
  EXPECT_EQ(m[3], table_names(left_out_of_all, ", "));
}

TEST(SchemeTable, TheDocumentsNameTheTablesSchemes) {
  std::string doc = read_text(SAMPLER_INSTRUMENTING_MD);
  EXPECT_NE(doc.find("or `all`; default `" + default_scheme_list() + "` |"), std::string::npos);
  std::string man = std::regex_replace(read_text(SAMPLER_MAN_PAGE), std::regex(R"(\\f[BRI])"), "");
  man = std::regex_replace(man, std::regex("\n"), " ");
  EXPECT_NE(man.find("Default: " + default_scheme_list() + ". The others: " + table_names(other_in_all, ", ") +
                     " and " + table_names(left_out_of_all, ", ") + "."),
            std::string::npos)
      << man;
}

// The driver takes `all`, its default and the names it knows from the table.
TEST(SchemeTable, TheDriverReadsTheTable) {
  Fixture f;
  EXPECT_TRUE(has(f.plan({"-c", "a.c"}), "-fplugin-arg-sampler-schemes=" + default_scheme_list()));
  EXPECT_TRUE(has(f.plan({"-fsampler-schemes=all", "-c", "a.c"}),
                  "-fplugin-arg-sampler-schemes=" +
                      table_names([](const SchemeRow& row) { return row.instrumented && row.in_all; }, ",")));
  for (const SchemeRow& row : kSchemeTable) {
    Plan p = f.plan({"-fsampler-schemes=" + std::string(row.name), "-c", "a.c"});
    EXPECT_EQ(p.exit_status.has_value(), !row.instrumented) << row.name;
  }
}

// The plugin's arguments are checked as the driver checks its options, in the same words.
TEST(PluginArguments, ValuesAreCheckedAsTheDriverChecksThem) {
  using namespace sampler::plugin;
  EXPECT_EQ(check_value("-fsampler-countdown", "region", kCountdownValues), std::nullopt);
  EXPECT_EQ(check_value("countdown", "regions", kCountdownValues),
            "invalid value 'regions' for countdown (region, site)");
  EXPECT_EQ(check_value("timestamps", "", kTimestampsValues),
            "invalid value '' for timestamps (none, first, last, both)");
  unsigned pairs = 7;
  EXPECT_EQ(parse_max_pairs("max-pairs", "0", pairs), std::nullopt);
  EXPECT_EQ(pairs, 0u);
  EXPECT_EQ(parse_max_pairs("max-pairs", "999999999", pairs), std::nullopt);
  EXPECT_EQ(pairs, 999999999u);
  for (const char* bad : {"", "-1", "1000000000", "12a", " 1"})
    EXPECT_EQ(parse_max_pairs("max-pairs", bad, pairs),
              "invalid value '" + std::string(bad) + "' for max-pairs (a number of sites, 0 to 999999999)");
  Fixture f;
  EXPECT_EQ(f.plan({"-fsampler-countdown=regions", "-c", "a.c"}).message,
            "sampler-cc: error: " + *check_value("-fsampler-countdown", "regions", kCountdownValues) + "\n");
}

}  // namespace
}  // namespace sampler::driver
