// Fuzz target: the argument parsing of sampler-cc / sampler-c++ (instrumentor/driver/driver.h, make_plan), which
// sees every command line a build system hands it.
//
// The input is a list of NUL-separated words: `ENV:NAME=VALUE` sets an environment variable, `FILE:TEXT` is
// the text of every response file (`@name`) the arguments name, the first byte's low bit chooses sampler-c++,
// and every other word is an argument. Checks, besides "no crash, no hang": an exit is status 0, 1 or 2, with a
// message when it is not 0; otherwise the compiler comes first, then the user's arguments, in order and
// unchanged, minus the drivers' own options.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "driver/driver.h"
#include "fuzz_util.h"

namespace {

bool drivers_own(const std::string& a) {
  for (const char* pairs_switch :
       {"compare-constants", "assign-into-field", "assign-into-index", "assign-across-pointer"}) {
    if (a == std::string("-fsampler-") + pairs_switch || a == std::string("-fno-sampler-") + pairs_switch) return true;
  }
  return a.rfind("-fsampler-schemes=", 0) == 0 || a.rfind("-fsampler-scheme=", 0) == 0 ||
         a.rfind("-fsampler-timestamps=", 0) == 0 ||
         a.rfind("-fsampler-countdown=", 0) == 0 || a.rfind("-fsampler-max-pairs=", 0) == 0 ||
         a.rfind("-fsampler-include-function=", 0) == 0 || a.rfind("-fsampler-exclude-function=", 0) == 0 ||
         a.rfind("-fsampler-include-file=", 0) == 0 || a.rfind("-fsampler-exclude-file=", 0) == 0 ||
         a == "-fno-sampler" || a == "-fsampler" || a == "-static-libsampler" || a == "--help";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler;
  if (size == 0) return 0;
  const bool cxx = (data[0] & 1) != 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string file_text;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    std::string word(text.substr(start, end - start));
    if (word.rfind("ENV:", 0) == 0 && word.find('=') != std::string::npos) {
      size_t eq = word.find('=');
      env[word.substr(4, eq - 4)] = word.substr(eq + 1);
    } else if (word.rfind("FILE:", 0) == 0) {
      file_text = word.substr(5);
    } else {
      args.push_back(std::move(word));
    }
    start = end + 1;
  }
  driver::Layout layout{"/prefix/lib/sampler/sampler-plugin.so", "/prefix/lib", false};
  auto getenv = [&](const char* name) -> const char* {
    auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  };
  auto read_file = [&](const std::string&) -> std::optional<std::string> { return file_text; };
  const driver::Plan plan = driver::make_plan(args, cxx, layout, getenv, read_file);

  if (plan.exit_status) {
    FUZZ_CHECK(*plan.exit_status >= 0 && *plan.exit_status <= 2);
    FUZZ_CHECK(*plan.exit_status == 0 || !plan.message.empty());
    return 0;
  }
  FUZZ_CHECK(!plan.argv.empty() && !plan.argv[0].empty());
  if (plan.print_clang_version) return 0;
  std::vector<std::string> passed;
  for (const std::string& a : args)
    if (!drivers_own(a)) passed.push_back(a);
  FUZZ_CHECK(plan.argv.size() >= passed.size() + 1);
  for (size_t i = 0; i < passed.size(); ++i) FUZZ_CHECK(plan.argv[i + 1] == passed[i]);
  return 0;
}
