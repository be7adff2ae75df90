// sampler-run's work. The order matters for transparency: the report descriptor is a memfd (private, never a
// standard descriptor), signals sent to the launcher are passed on to the program, and after the program ends
// the launcher uploads within a bounded time and then exits as the program did.
#include "launcher/launcher.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collector/outcome.h"
#include "private_files.h"
#include "sections/diagnostics.h"
#include "sections/elf_debug_info.h"
#include "sections/elf_section.h"
#include "sections/hex.h"
#include "sections/line_reader.h"
#include "sections/lines.h"
#include "sections/report.h"

namespace sampler::launcher {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using collector::format_outcome;
using collector::Outcome;

// The largest report read back from the program (the collector's default --max-report).
constexpr size_t kMaxReportBytes = 64u << 20;

volatile sig_atomic_t child_pid = 0;

// Signals someone sent to the launcher (kill, systemd, a supervisor) go on to the program. Those the terminal
// sent (Ctrl-C: si_code SI_KERNEL) reached the program already, as it is in the same process group.
void forward_signal(int signal_number, siginfo_t* info, void*) {
  if (child_pid > 0 && info != nullptr && info->si_code <= 0) kill(child_pid, signal_number);
}

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

// Which of the report's last subreport and section the program left open (read as the formats library reads).
class OpenEnds : public ReportVisitor, public SamplesVisitor {
 public:
  void begin_subreport(std::string_view, uint64_t) override { subreport_cut = false, section_cut = false; }
  void end_subreport(bool complete) override { subreport_cut = !complete; }
  void begin_section(const SampleSectionHeader& header) override {
    section_cut = false;
    section_line = header.line;
  }
  void end_section(bool complete) override { section_cut = !complete; }

  bool subreport_cut = false, section_cut = false;
  uint64_t section_line = 0;  // of the last section's start tag
};

// A program killed while writing its report leaves the last subreport open, maybe in the middle of a line
// (docs/formats.md, "Cut short"). Readers take that at the end of a report, but the outcome goes after it: the
// report is ended first. The partial line goes (a counter cut short reads as a smaller number, a tag cut short
// as text). An open samples or timestamps section goes too: closed, it would look whole, and the analysis would
// refuse it for its missing lines (an error per run). The open subreport gets its end tag: what was whole stays.
void end_cut_report(std::string& text) {
  if (!text.empty() && text.back() != '\n') text.resize(text.rfind('\n') + 1);  // npos + 1: no whole line
  // A last line </report> closes whatever was open (the usual, whole report): no need to read it all at exit.
  if (text.empty() || text.ends_with("\n</report>\n") || text.ends_with("\n</report>\r\n")) return;
  DiagnosticList ignored;  // the collector says what is wrong with a report; here only its open ends matter
  OpenEnds ends;
  LineReader input(text, "report", ignored);
  read_report(input, ends, ends);
  if (ends.section_cut && ends.section_line > 0) {
    size_t start = 0;  // of line section_line
    for (uint64_t line = 1; line < ends.section_line && start != std::string::npos; ++line) {
      start = text.find('\n', start);
      if (start != std::string::npos) ++start;
    }
    if (start != std::string::npos) text.resize(start);
  }
  if (ends.subreport_cut) text += "</report>\n";
}

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(buffer.data() + got, bytes - got, 0);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) got += static_cast<size_t>(n);
  }
  return hex_bytes(buffer.data(), buffer.size());
}

// execvp's search, to name the file for its build ID.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st{};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return name;
    dirs.remove_prefix(colon + 1);
  }
}

// The last report for --show-last, one file "last": a line "sampler-run-last BYTES", the status line, then the
// report's BYTES; what follows is left from an earlier, longer report. Written in place, never replaced: a new
// file renamed over the old one frees the old one's blocks, and on a filesystem mounted with `discard` (this
// machine's) that waits for the disk, several ms per run (docs/performance.md). flock() keeps two launchers from
// mixing their writes, and --show-last from reading half of one.
constexpr std::string_view kLastHeader = "sampler-run-last ";

bool write_last(const std::string& path, std::string_view status, std::string_view report) {
  int fd = open_private_file(path);
  if (fd < 0) return false;
  flock(fd, LOCK_EX);
  std::string bytes = std::string(kLastHeader) + std::to_string(report.size()) + "\n";
  bytes.append(status).append(report);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  // Shrink only when much is left over: freeing blocks is what costs.
  struct stat st{};
  if (done == bytes.size() && fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) > bytes.size() + (1u << 20)) {
    if (ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) done = 0;
  }
  close(fd);
  return done == bytes.size();
}

// Reads what write_last() wrote; false when there is none or it is not in that form.
bool read_last(const std::string& path, std::string& status, std::string& report) {
  std::string bytes, why;
  if (!read_private_file(path, kMaxReportBytes + (1u << 20), bytes, why)) return false;
  std::string_view rest = bytes;
  if (!rest.starts_with(kLastHeader)) return false;
  rest.remove_prefix(kLastHeader.size());
  size_t size = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), size);
  if (ec != std::errc() || end == rest.data() + rest.size() || *end != '\n') return false;
  rest.remove_prefix(static_cast<size_t>(end - rest.data()) + 1);
  size_t newline = rest.find('\n');
  if (newline == std::string_view::npos || rest.size() - newline - 1 < size) return false;
  status = rest.substr(0, newline + 1);
  report = rest.substr(newline + 1, size);
  return true;
}

size_t discard_answer(char* data, size_t size, size_t count, void* answer) {
  static_cast<std::string*>(answer)->append(data, std::min<size_t>(size * count, 4096));
  return size * count;
}

// libcurl is loaded only when there is something to upload: linking it would load its dependencies (TLS,
// Kerberos, LDAP, ...) at every start, before the program even begins (the cost: docs/performance.md).
struct Curl {
  decltype(&curl_global_init) global_init;
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_setopt) setopt;
  decltype(&curl_easy_perform) perform;
  decltype(&curl_easy_getinfo) getinfo;
  decltype(&curl_easy_cleanup) cleanup;
  decltype(&curl_easy_strerror) strerror;
  decltype(&curl_slist_append) slist_append;
  decltype(&curl_slist_free_all) slist_free_all;
};

const Curl* load_curl() {
  static const Curl* loaded = []() -> const Curl* {
    void* library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    static Curl curl;
    bool ok = true;
    auto get = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      ok = ok && function != nullptr;
    };
    get(curl.global_init, "curl_global_init");
    get(curl.easy_init, "curl_easy_init");
    get(curl.setopt, "curl_easy_setopt");
    get(curl.perform, "curl_easy_perform");
    get(curl.getinfo, "curl_easy_getinfo");
    get(curl.cleanup, "curl_easy_cleanup");
    get(curl.strerror, "curl_easy_strerror");
    get(curl.slist_append, "curl_slist_append");
    get(curl.slist_free_all, "curl_slist_free_all");
    if (!ok || curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return nullptr;
    return &curl;
  }();
  return loaded;
}

void say(const LaunchSettings& settings, const std::string& message) {
  // What the collector answered and file names may hold anything: never raw on the terminal.
  if (settings.verbose) std::fprintf(stderr, "sampler-run: %s\n", escape_control_characters(message).c_str());
}

// The spool: RUNID.report.gz files, oldest first; bounded by age and total size.
struct SpoolEntry {
  fs::path path;
  fs::file_time_type time;
  uintmax_t size;
};

std::vector<SpoolEntry> spool_entries(const std::string& dir) {
  std::vector<SpoolEntry> entries;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.path().string().ends_with(".report.gz")) continue;
    std::error_code ignored;
    SpoolEntry e{entry.path(), entry.last_write_time(ignored), entry.file_size(ignored)};
    if (!ignored) entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const SpoolEntry& a, const SpoolEntry& b) { return a.time < b.time; });
  return entries;
}

void prune_spool(const LaunchSettings& settings) {
  std::vector<SpoolEntry> entries = spool_entries(settings.spool_dir);
  auto now = fs::file_time_type::clock::now();
  uintmax_t total = 0;
  for (const SpoolEntry& e : entries) total += e.size;
  for (const SpoolEntry& e : entries) {
    bool too_old = now - e.time > std::chrono::seconds(settings.spool_max_age_seconds);
    if (!too_old && total <= settings.spool_max_bytes) continue;
    std::error_code ignored;
    if (fs::remove(e.path, ignored)) {
      total -= e.size;
      say(settings, "dropped spooled report " + e.path.filename().string() + (too_old ? " (too old)" : " (spool full)"));
    }
  }
}

}  // namespace

UserDirs default_user_dirs() {
  UserDirs dirs;
  std::string config_why, cache_why;
  std::string config = user_base_dir("XDG_CONFIG_HOME", ".config", config_why);
  std::string cache = user_base_dir("XDG_CACHE_HOME", ".cache", cache_why);
  if (!config.empty()) dirs.config_file = config + "/sampler/run.conf";
  if (!cache.empty()) {
    dirs.state_dir = cache + "/sampler";
    dirs.spool_dir = dirs.state_dir + "/spool";
  }
  if (config.empty() || cache.empty()) dirs.why = config.empty() ? config_why : cache_why;
  return dirs;
}

bool read_config(const std::string& path, bool private_file, LaunchSettings& s, bool& found, std::string& error,
                 std::string& refused) {
  std::string bytes;
  if (private_file) {
    bool missing = false;
    found = read_private_file(path, 1u << 20, bytes, refused, &missing);
    if (missing) refused.clear();
  } else {
    std::ifstream file(path, std::ios::binary);
    found = static_cast<bool>(file);
    bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  if (!found) return true;
  std::istringstream in(bytes);
  std::string line;
  uint64_t number = 0;
  auto unsigned_value = [](const std::string& text, uint64_t& value) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
  };
  while (std::getline(in, line)) {
    ++number;
    auto trim = [](std::string text) {
      size_t a = text.find_first_not_of(" \t\r"), b = text.find_last_not_of(" \t\r");
      return a == std::string::npos ? std::string() : text.substr(a, b - a + 1);
    };
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    size_t equals = line.find('=');
    if (equals == std::string::npos) {
      error = "line " + std::to_string(number) + ": expected KEY = VALUE";
      return false;
    }
    std::string key = trim(line.substr(0, equals)), value = trim(line.substr(equals + 1));
    uint64_t n = 0;
    bool ok = true;
    if (key == "enabled") {
      ok = value == "yes" || value == "no" || value == "true" || value == "false";
      s.enabled = value == "yes" || value == "true";
    } else if (key == "upload") {
      s.upload_url = value;
    } else if (key == "api-key") {
      s.api_key = value;
    } else if (key == "app") {
      s.app = value;
    } else if (key == "version") {
      s.version = value;
    } else if (key == "sparsity") {
      s.sparsity = value;
    } else if (key == "seed") {
      s.seed = value;
    } else if (key == "spool") {
      s.spool_dir = value;
    } else if (key == "keep") {
      s.keep_dir = value;
    } else if (key == "ca-file") {
      s.ca_file = value;
    } else if (key == "upload-timeout-ms") {
      ok = unsigned_value(value, s.upload_timeout_ms);
    } else if (key == "spool-max-bytes") {
      ok = unsigned_value(value, s.spool_max_bytes);
    } else if (key == "spool-max-age-days") {
      ok = unsigned_value(value, n);
      s.spool_max_age_seconds = n * 86400;
    } else {
      error = "line " + std::to_string(number) + ": unknown key '" + key + "'";
      return false;
    }
    if (!ok) {
      error = "line " + std::to_string(number) + ": bad value for '" + key + "'";
      return false;
    }
  }
  return true;
}

std::string gzip_text(std::string_view text, Clock::time_point compress_until, size_t* left_uncompressed) {
  // Above this, gzip's fastest level: a fifth of the default's time for a slightly larger body.
  constexpr size_t kFastLevelBytes = 1u << 20;
  // Input goes to zlib in slices of this size; the clock is read between them.
  constexpr size_t kSlice = 1u << 20;
  if (left_uncompressed != nullptr) *left_uncompressed = 0;
  z_stream stream{};
  const int level = text.size() > kFastLevelBytes ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION;
  if (deflateInit2(&stream, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 64, '\0');
  size_t given = 0;
  bool storing = false;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (stream.avail_in == 0 && given < text.size()) {
      if (!storing && given > 0 && Clock::now() >= compress_until) {
        // Out of time: stored blocks for the rest (deflateParams first flushes what it has at the old level).
        storing = deflateParams(&stream, Z_NO_COMPRESSION, Z_DEFAULT_STRATEGY) == Z_OK;
        if (storing && left_uncompressed != nullptr) *left_uncompressed = text.size() - given;
      }
      const size_t slice = std::min(kSlice, text.size() - given);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data() + given));
      stream.avail_in = static_cast<uInt>(slice);
      given += slice;
    }
    // Room for a slice stored as it is, whatever the bound assumed about switching levels.
    if (out.size() - stream.total_out < kSlice + 1024) out.resize(out.size() + kSlice + 1024);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + stream.total_out);
    stream.avail_out = static_cast<uInt>(out.size() - stream.total_out);
    rc = deflate(&stream, given == text.size() ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) break;
  }
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return rc == Z_STREAM_END ? out : std::string();
}

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

bool has_site_information(const std::string& path) {
  bool found = false;
  DiagnosticList ignored;
  for_each_elf_section(
      path, ".debug_site_info",
      [&found](const ElfSection& section) { found = found || section.status == ElfSection::Status::kFound; },
      ignored);
  return found;
}

// The shared objects the dynamic loader maps for `program` with environment `envp` (LD_LIBRARY_PATH and all), as
// ldd finds them: the program's own loader run with LD_TRACE_LOADED_OBJECTS=1 lists them without running the
// program. Empty for a static program or when the loader cannot say.
std::vector<std::string> loaded_libraries(const std::string& program, char* const* envp) {
  // Only a dynamically linked ELF program stops in its loader: a static one (no .interp) would run a second
  // time, and a script would have its interpreter traced, or run if that is static.
  bool dynamic = false;
  DiagnosticList ignored;
  for_each_elf_section(
      program, ".interp",
      [&dynamic](const ElfSection& section) { dynamic = dynamic || section.status == ElfSection::Status::kFound; },
      ignored);
  if (!dynamic) return {};
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
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : program + "\t" + library_path) hash = (hash ^ c) * 0x100000001b3ull;
  char name[32];
  std::snprintf(name, sizeof name, "/%016llx", static_cast<unsigned long long>(hash));
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
    if (!has_site_information(library)) continue;
    std::string id = read_build_id(library);
    found.emplace_back(library, id);
    text += library + "\t" + file_identity(library) + "\t" + (id.empty() ? "-" : id) + "\n";
  }
  if (!cache_file.empty()) write_private_file(cache_file, text);
  return found;
}

bool http_post(const std::string& url, const std::vector<std::string>& headers, std::string_view body,
               uint64_t timeout_ms, long& status, std::string& answer, const std::string& ca_file) {
  const Curl* api = load_curl();
  answer.clear();
  status = 0;
  if (api == nullptr) {
    answer = "cannot load libcurl.so.4";
    return false;
  }
  if (timeout_ms == 0) {
    answer = "no time left to upload";
    return false;
  }
  CURL* curl = api->easy_init();
  if (curl == nullptr) return false;
  curl_slist* list = nullptr;
  for (const std::string& header : headers) list = api->slist_append(list, header.c_str());
  list = api->slist_append(list, "Expect:");  // no 100-continue round trip
  api->setopt(curl, CURLOPT_URL, url.c_str());
  api->setopt(curl, CURLOPT_HTTPHEADER, list);
  api->setopt(curl, CURLOPT_POSTFIELDS, body.data());
  api->setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  api->setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  api->setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api->setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!ca_file.empty()) api->setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  api->setopt(curl, CURLOPT_WRITEFUNCTION, discard_answer);
  api->setopt(curl, CURLOPT_WRITEDATA, &answer);
  CURLcode rc = api->perform(curl);
  api->getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  api->slist_free_all(list);
  api->cleanup(curl);
  if (rc != CURLE_OK) {
    answer = api->strerror(rc);
    return false;
  }
  while (!answer.empty() && answer.back() == '\n') answer.pop_back();
  return true;
}

std::string api_endpoint(std::string url, std::string_view path) {
  while (url.ends_with("/")) url.pop_back();
  if (!url.ends_with(path)) url += path;
  return url;
}

UploadStatus upload_report(const std::string& url, const std::string& api_key, std::string_view gzip_body,
                           uint64_t timeout_ms, std::string& answer, const std::string& ca_file) {
  long status = 0;
  if (!http_post(api_endpoint(url, "/api/reports"),
                 {"Authorization: APIKey " + api_key, "Content-Type: text/plain", "Content-Encoding: gzip"}, gzip_body,
                 timeout_ms, status, answer, ca_file)) {
    return UploadStatus::kUnreachable;
  }
  if (status == 200) return UploadStatus::kSent;
  if (status >= 400 && status < 500 && status != 408 && status != 429) return UploadStatus::kRejected;
  return UploadStatus::kUnreachable;
}

int launch(const LaunchSettings& settings, const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (!settings.enabled) {
    // Opted out: the program runs as if sampler-run were not there.
    execvp(args[0], args.data());
    int error = errno;
    std::fprintf(stderr, "sampler-run: cannot run '%s': %s\n", escape_control_characters(args[0]).c_str(),
                 std::strerror(error));
    return error == ENOENT ? 127 : 126;
  }
  // The report descriptor: a memfd, moved above the standard descriptors (they may be closed: docs/decisions.md).
  int memfd = memfd_create("sampler-report", 0);
  int report_fd = memfd >= 0 ? fcntl(memfd, F_DUPFD, 3) : -1;
  if (memfd >= 0) close(memfd);
  if (report_fd < 0) {
    std::fprintf(stderr, "sampler-run: cannot create the report descriptor: %s\n", std::strerror(errno));
    return 126;
  }
  std::string seed = settings.seed.empty() ? std::to_string(std::strtoull(random_hex(8).c_str(), nullptr, 16))
                                           : settings.seed;
  // The program's environment: ours, with the runtime's variables set for this run (docs/instrumenting.md section 2).
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry = *e;
    if (entry.starts_with("SAMPLER_REPORT_FD=") || entry.starts_with("SAMPLER_SPARSITY=") ||
        entry.starts_with("SAMPLER_SEED=") || entry.starts_with("SAMPLER_FILE=")) {
      continue;
    }
    environment.emplace_back(entry);
  }
  environment.push_back("SAMPLER_REPORT_FD=" + std::to_string(report_fd));
  environment.push_back("SAMPLER_SPARSITY=" + settings.sparsity);
  environment.push_back("SAMPLER_SEED=" + seed);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  struct sigaction forward{};
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  struct sigaction previous[std::size(kForwardedSignals)];
  // Block them while the program starts: a signal in between would find no child to forward to.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int signal_number : kForwardedSignals) sigaddset(&forwarded, signal_number);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &forward, &previous[i]);

  // posix_spawnp (vfork and exec underneath): cheaper than fork for a launcher that must add little to the
  // run, and it reports a failed exec as its result. The child gets the mask the launcher had, and signals
  // that were ignored stay ignored; handled ones are reset by exec, as usual.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setsigmask(&attributes, &old_mask);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  Clock::time_point start = Clock::now();
  pid_t pid = 0;
  int spawn_error = posix_spawnp(&pid, args[0], nullptr, &attributes, args.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  if (spawn_error == 0) child_pid = pid;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (spawn_error != 0) {
    for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &previous[i], nullptr);
    std::fprintf(stderr, "sampler-run: cannot run '%s': %s\n", escape_control_characters(args[0]).c_str(),
                 std::strerror(spawn_error));
    return spawn_error == ENOENT ? 127 : 126;
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  child_pid = 0;
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &previous[i], nullptr);
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(settings.upload_timeout_ms);

  // The report as the program wrote it, then the outcome.
  std::string text;
  struct stat st{};
  if (fstat(report_fd, &st) == 0 && st.st_size > 0 && static_cast<size_t>(st.st_size) <= kMaxReportBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      ssize_t r = pread(report_fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
      if (r <= 0 && errno != EINTR) break;
      if (r > 0) got += static_cast<size_t>(r);
    }
    text.resize(got);
  } else if (st.st_size > 0) {
    say(settings, "the report is larger than " + std::to_string(kMaxReportBytes) + " bytes: sending the outcome only");
  }
  close(report_fd);
  end_cut_report(text);
  Outcome outcome;
  outcome.run_id = random_hex(16);
  outcome.app = settings.app;
  outcome.version = settings.version;
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status); else outcome.exit_status = WEXITSTATUS(status);
  outcome.wall_seconds = wall;
  outcome.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  outcome.sparsity = settings.sparsity;
  outcome.seed = seed;
  std::string program = find_program(argv[0]);
  std::error_code ec;
  std::string absolute = fs::absolute(program, ec).lexically_normal().string();
  outcome.build_ids.emplace_back(ec ? program : absolute, read_build_id(program));
  for (auto& [library, id] : instrumented_libraries(ec ? program : absolute, envp.data(),
                                                    settings.state_dir.empty() ? "" : settings.state_dir + "/libraries")) {
    outcome.build_ids.emplace_back(library, id);
  }
  text += format_outcome(outcome);

  std::string result;
  if (!settings.keep_dir.empty()) {
    // A directory the user named may be shared: new files only (0600, never through a link), under a fresh name.
    if (mkdir(settings.keep_dir.c_str(), 0700) != 0 && errno != EEXIST) fs::create_directories(settings.keep_dir, ec);
    if (!write_private_file(settings.keep_dir + "/" + outcome.run_id + ".report", text)) {
      say(settings, "cannot keep a copy in '" + settings.keep_dir + "'");
    }
  }
  if (!settings.upload_url.empty()) {
    // The bound (--upload-timeout-ms, from the program's end) is shared out: compressing may take until its
    // half, sending (this report, then spooled ones) until three quarters, and the last quarter is for writing
    // the spool and the state files. A report too large to compress in time is sent partly uncompressed.
    const std::chrono::milliseconds bound(settings.upload_timeout_ms);
    size_t uncompressed = 0;
    std::string gz = gzip_text(text, deadline - bound / 2, &uncompressed);
    if (uncompressed > 0) {
      say(settings, "compressing the report took half of --upload-timeout-ms: its last " +
                        std::to_string(uncompressed) + " bytes go uncompressed");
    }
    const Clock::time_point send_until = deadline - bound / 4;
    auto remaining = [&send_until] {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(send_until - Clock::now()).count();
      return static_cast<uint64_t>(std::max<int64_t>(left, 0));
    };
    std::string answer;
    UploadStatus sent = upload_report(settings.upload_url, settings.api_key, gz, remaining(), answer,
                                     settings.ca_file);
    if (sent == UploadStatus::kSent) {
      result = "sent to " + settings.upload_url + ": " + answer;
      say(settings, "report " + outcome.run_id + " " + result);
      // The collector answers: send what waited, oldest first, while time remains.
      std::string why;
      bool spool_usable = !settings.spool_dir.empty() && make_private_dir(settings.spool_dir, why);
      for (const SpoolEntry& entry : spool_usable ? spool_entries(settings.spool_dir) : std::vector<SpoolEntry>()) {
        if (remaining() == 0) break;
        std::string spooled, spooled_answer;
        if (!read_private_file(entry.path.string(), settings.spool_max_bytes, spooled, why)) {
          say(settings, "spooled report not sent: " + why);
          continue;
        }
        UploadStatus s = upload_report(settings.upload_url, settings.api_key, spooled, remaining(),
                                     spooled_answer, settings.ca_file);
        if (s == UploadStatus::kUnreachable) break;
        fs::remove(entry.path, ec);
        say(settings, "spooled report " + entry.path.filename().string() +
                          (s == UploadStatus::kSent ? " sent" : " refused, dropped: " + spooled_answer));
      }
    } else if (sent == UploadStatus::kRejected) {
      result = "refused by " + settings.upload_url + ": " + answer;
      say(settings, "report " + outcome.run_id + " " + result);
    } else {
      std::string why = "no spool directory";
      bool spooled = !settings.spool_dir.empty() && make_private_dir(settings.spool_dir, why) &&
                     write_private_file(settings.spool_dir + "/" + outcome.run_id + ".report.gz", gz);
      result = (spooled ? "spooled in " + settings.spool_dir : "lost (" + why + ")") + ": " + settings.upload_url +
               " unreachable: " + answer;
      say(settings, "report " + outcome.run_id + " " + result);
      if (spooled) prune_spool(settings);
    }
  } else {
    result = "not sent (no upload URL)";
  }
  result = escape_control_characters(result);  // one line in "last", whatever the collector answered
  if (std::string why; !settings.state_dir.empty() && !(make_private_dir(settings.state_dir, why) &&
                                                         write_last(settings.state_dir + "/last",
                                                                    "report " + outcome.run_id + " " + result + "\n",
                                                                    text))) {
    say(settings, "--show-last will not have this report: " + (why.empty() ? "cannot write '" + settings.state_dir +
                                                                             "/last'" : why));
  }

  if (WIFSIGNALED(status)) {
    // Die as the program died. The program dumped its own core; the launcher must not add a second.
    int signal_number = WTERMSIG(status);
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    std::fflush(nullptr);
    signal(signal_number, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal_number);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    raise(signal_number);
    return 128 + signal_number;  // a signal whose default is not to terminate
  }
  return WEXITSTATUS(status);
}

int show_last(const LaunchSettings& settings) {
  std::string report, status;
  if (settings.state_dir.empty()) {
    std::fprintf(stderr, "sampler-run: no state directory (no private home directory of this user's)\n");
    return 1;
  }
  if (!read_last(settings.state_dir + "/last", status, report)) {
    std::fprintf(stderr, "sampler-run: no report has been sent yet (nothing in '%s')\n",
                 escape_control_characters(settings.state_dir).c_str());
    return 1;
  }
  if (status.ends_with('\n')) status.pop_back();
  std::fprintf(stderr, "sampler-run: %s\n", escape_control_characters(status).c_str());
  std::fwrite(report.data(), 1, report.size(), stdout);
  return 0;
}

}  // namespace sampler::launcher
