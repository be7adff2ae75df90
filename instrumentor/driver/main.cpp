// sampler-cc / sampler-c++: drop-in clang-19 drivers that instrument every C and C++ translation unit for sampled
// bug feedback. The decisions are in driver.cpp; this file finds the driver's parts and runs clang,
// without a shell.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "driver.h"

namespace {

std::string executable_directory() {
  std::vector<char> buffer(4096);
  ssize_t n = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (n <= 0) return ".";
  std::string path(buffer.data(), static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

// The build tree's driver finds the build tree's plugin and runtime; an installed driver finds them relative to
// its own bin/, so an installed tree can be moved (or staged with DESTDIR) and still work.
sampler::driver::Layout find_layout() {
  sampler::driver::Layout layout;
  std::string dir = executable_directory();
  if (dir == SAMPLER_BUILD_DRIVER_DIR) {
    layout.plugin = SAMPLER_BUILD_PLUGIN;
    layout.libdir = SAMPLER_BUILD_LIBDIR;
    return layout;
  }
  std::string prefix = dir.substr(0, dir.rfind('/'));
  layout.plugin = prefix + "/" SAMPLER_INSTALL_PLUGIN;
  layout.libdir = prefix + "/" SAMPLER_INSTALL_LIBDIR;
  for (const char* system : {"/usr/lib", "/usr/lib64", "/lib", "/usr/lib/x86_64-linux-gnu"})
    if (layout.libdir == system) layout.system_libdir = true;
  return layout;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int run(const std::vector<std::string>& argv, bool replace_process, const char* program) {
  std::vector<char*> raw;
  for (const std::string& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
  raw.push_back(nullptr);
  if (replace_process) {
    execvp(raw[0], raw.data());
  } else {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      execvp(raw[0], raw.data());
      std::fprintf(stderr, "%s: error: cannot run '%s': %s\n", program, raw[0], std::strerror(errno));
      _exit(127);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  std::fprintf(stderr, "%s: error: cannot run '%s': %s\n", program, raw[0], std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = argv[0];
  name = name.substr(name.rfind('/') + 1);
  bool cxx = name.find("++") != std::string::npos || name.find("cxx") != std::string::npos;
  const char* program = cxx ? "sampler-c++" : "sampler-cc";
  std::vector<std::string> args(argv + 1, argv + argc);
  sampler::driver::Plan plan =
      sampler::driver::make_plan(args, cxx, find_layout(), [](const char* v) { return std::getenv(v); }, read_file);
  for (const std::string& w : plan.warnings) std::fprintf(stderr, "%s\n", w.c_str());
  if (plan.exit_status) {
    std::fputs(plan.message.c_str(), *plan.exit_status == 0 ? stdout : stderr);
    if (plan.print_clang_version) return run(plan.argv, false, program);
    return *plan.exit_status;
  }
  if (std::getenv("SAMPLER_CC_VERBOSE")) {
    for (const std::string& a : plan.argv) std::fprintf(stderr, "%s ", a.c_str());
    std::fputs("\n", stderr);
  }
  return run(plan.argv, true, program);
}
