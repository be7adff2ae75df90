// Build IDs of the program and of the instrumented libraries it loads (libraries.h), for the outcome subreport.
#include "libraries.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string_view>

#include "private_files.h"
#include "sections/diagnostics.h"
#include "sections/elf_debug_info.h"
#include "sections/elf_section.h"
#include "sections/hex.h"
#include "sections/lines.h"

namespace sampler::launcher {

std::string read_build_id(const std::string& path) {
  DiagnosticList ignored;
  std::optional<ElfDebugInfo> info = read_elf_debug_info(path, ignored);
  return info ? hex_bytes(info->build_id) : std::string();
}

namespace {

// "dev:inode:size:mtime" of a file, "" when it cannot be stat()ed: what says a cached answer still holds.
std::string file_identity(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return {};
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// Whether the ELF file at `path` has a section `name` (false for anything else).
bool has_section(const std::string& path, const char* name) {
  bool found = false;
  DiagnosticList ignored;
  for_each_elf_section(
      path, name, [&found](const ElfSection& section) { found = found || section.status == ElfSection::Status::kFound; },
      ignored);
  return found;
}

// The shared objects the dynamic loader maps for `program` with environment `envp` (LD_LIBRARY_PATH and all), as
// ldd finds them: the program's own loader run with LD_TRACE_LOADED_OBJECTS=1 lists them without running the
// program. Empty for a static program or when the loader cannot say.
std::vector<std::string> loaded_libraries(const std::string& program, char* const* envp) {
  // Only a dynamically linked ELF program stops in its loader: a static one (no .interp) would run a second
  // time, and a script would have its interpreter traced, or run if that is static.
  if (!has_section(program, ".interp")) return {};
  // A program that gains privileges (set-user-ID, set-group-ID, file capabilities) may ignore the variable, in
  // its secure mode, and run again: it is not asked.
  struct stat st{};
  if (stat(program.c_str(), &st) != 0 || (st.st_mode & (S_ISUID | S_ISGID)) != 0 ||
      getxattr(program.c_str(), "security.capability", nullptr, 0) >= 0) {
    return {};
  }
  std::vector<std::string> environment;
  for (char* const* e = envp; *e != nullptr; ++e) environment.emplace_back(*e);
  environment.emplace_back("LD_TRACE_LOADED_OBJECTS=1");
  std::vector<char*> env;
  for (std::string& entry : environment) env.push_back(entry.data());
  env.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string path = program;
  char* argv[] = {path.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  for (;;) {
    if (rc != 0) break;
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || text.size() > (1u << 20)) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  if (rc == 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::vector<std::string> libraries;
  if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return libraries;
  // Lines "\tlibfoo.so.1 => /usr/lib/libfoo.so.1 (0x...)"; the loader and the vDSO have no "=> PATH".
  std::string_view rest = text;
  while (!rest.empty()) {
    std::string_view line = text::take_line(rest);
    size_t arrow = line.find(" => /");
    size_t paren = line.rfind(" (0x");
    if (arrow == std::string_view::npos || paren == std::string_view::npos || paren < arrow + 4) continue;
    libraries.emplace_back(line.substr(arrow + 4, paren - arrow - 4));
  }
  return libraries;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> instrumented_libraries(const std::string& program,
                                                                        char* const* envp,
                                                                        const std::string& cache_dir) {
  // The cache: one file per program (named by a hash of its path and LD_LIBRARY_PATH), a first line with what
  // the answer depends on, then "PATH<TAB>IDENTITY<TAB>BUILD-ID" per instrumented library ("-" when the library
  // has site information but no build ID). Valid while the program and every library listed keep their
  // identity; a library added to the program needs the program rebuilt or relinked, which changes it.
  std::string library_path;
  for (char* const* e = envp; *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with("LD_LIBRARY_PATH=")) library_path = *e + 16;
  }
  std::string key = "program\t" + program + "\t" + file_identity(program) + "\t" + library_path + "\n";
  const std::string name = "/" + hashed_file_name(program + "\t" + library_path);
  std::string cached, why;
  // The directory is checked (or made) once: a cache only where the user alone can write.
  std::string cache_file = !cache_dir.empty() && make_private_dir(cache_dir, why) ? cache_dir + name : std::string();
  std::vector<std::pair<std::string, std::string>> found;
  if (!cache_file.empty() && read_private_file(cache_file, 1u << 20, cached, why)) {
    if (cached.starts_with(key)) {
      bool valid = true;
      std::string_view rest = std::string_view(cached).substr(key.size());
      while (valid && !rest.empty()) {
        std::string_view line = text::take_line(rest);
        size_t tab1 = line.find('\t'), tab2 = line.rfind('\t');
        if (tab1 == std::string_view::npos || tab2 == tab1) {
          valid = false;
          break;
        }
        std::string path(line.substr(0, tab1));
        valid = file_identity(path) == line.substr(tab1 + 1, tab2 - tab1 - 1);
        std::string id(line.substr(tab2 + 1));
        found.emplace_back(path, id == "-" ? std::string() : id);
      }
      if (valid) return found;
      found.clear();
    }
  }
  std::string text = key;
  for (const std::string& library : loaded_libraries(program, envp)) {
    if (!has_section(library, ".debug_site_info")) continue;
    std::string id = read_build_id(library);
    found.emplace_back(library, id);
    text += library + "\t" + file_identity(library) + "\t" + (id.empty() ? "-" : id) + "\n";
  }
  if (!cache_file.empty()) write_private_file(cache_file, text);
  return found;
}

}  // namespace sampler::launcher
