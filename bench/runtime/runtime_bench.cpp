// Benchmarks of libsampler ; each runs its baseline in the same run and prints the ratio.
//
//  1. fast path: one coverage site per iteration of a tight loop with sampling off (every site takes the fast
//     path), against the same loop built uninstrumented: ns per site and the ratio.
//  2. two dense workloads (see workloads.c): `records`, a record parser with a site every ~40 instructions (the
//     issue's "a site every few dozen instructions"), and `dense`, hashing and a binary search with a site every
//     ~21 instructions (a harder case), each instrumented at SAMPLER_SPARSITY=1000 and 100 against the same source
//     built uninstrumented: overhead in percent (goals: <= 5% and <= 15%); with sampling off as a reference (the
//     fast path alone). `records` also with the amortized check (SAMPLER_REGION, one check per record of up to 5
//     sites) in place of the per-site check.
//  3. report writing: a unit of 10^6 sites written by sampler_finish_report() to a file: MB/s (goal >= 100).
// The settings are environment variables read at start-up, so each measurement runs in a child process (this
// program re-executed with --child) started with its own environment; the uninstrumented baseline runs in the
// same child, alternating with the instrumented code round by round; the ratio printed is the median of the
// per-round ratios.
//
// usage: runtime_bench [SCALE]    SCALE multiplies the iteration counts (default 1; 0.1 for a smoke run)
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sampler/sampler.h"

extern "C" {
uint64_t fast_path_plain(uint64_t n);
uint64_t fast_path_instrumented(uint64_t n);
uint64_t dense_plain(const uint32_t* input, size_t n, uint32_t* table, const uint32_t* sorted);
uint64_t dense_instrumented(const uint32_t* input, size_t n, uint32_t* table, const uint32_t* sorted);
uint64_t records_plain(const uint8_t* buffer, size_t size, uint32_t* tallies);
uint64_t records_instrumented(const uint8_t* buffer, size_t size, uint32_t* tallies);
uint64_t records_region(const uint8_t* buffer, size_t size, uint32_t* tallies);
}

extern char** environ;

namespace {

volatile uint64_t g_sink;

double seconds_of(auto&& work) {
  auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Rounds of each measurement (see compare()).
constexpr int kRounds = 101;

// ------------------------------------------------------------------------------------------- child modes

/// Runs `plain` and `instrumented` alternately (swapping the order every round, so a burst of load from elsewhere
/// on the machine hits both alike) and prints the best time of each and the median of the per-round ratios, the
/// figure least sensitive to a busy machine.
void compare(int rounds, uint64_t n, auto&& plain, auto&& instrumented) {
  double best_plain = 1e300, best_instrumented = 1e300;
  std::vector<double> ratios;
  for (int round = 0; round < rounds; ++round) {
    double p, i;
    if (round % 2 == 0) {
      p = seconds_of(plain);
      i = seconds_of(instrumented);
    } else {
      i = seconds_of(instrumented);
      p = seconds_of(plain);
    }
    best_plain = std::min(best_plain, p);
    best_instrumented = std::min(best_instrumented, i);
    ratios.push_back(i / p);
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("%.9f %.9f %.6f %llu\n", best_plain, best_instrumented, ratios[ratios.size() / 2],
              static_cast<unsigned long long>(n));
}

int child_fast_path(double scale) {
  const uint64_t n = static_cast<uint64_t>(20e6 * scale);
  compare(kRounds, n, [&] { g_sink = fast_path_plain(n); }, [&] { g_sink = fast_path_instrumented(n); });
  return 0;
}

int child_dense(double scale) {
  const size_t n = static_cast<size_t>(1e6 * scale);
  std::mt19937 random(42);
  std::vector<uint32_t> input(n), table_plain(4096), table_instrumented(4096), sorted(1024);
  for (uint32_t& x : input) x = random();
  for (uint32_t& x : sorted) x = random() & 0xffff;
  std::sort(sorted.begin(), sorted.end());
  compare(
      kRounds, n, [&] { g_sink = dense_plain(input.data(), n, table_plain.data(), sorted.data()); },
      [&] { g_sink = dense_instrumented(input.data(), n, table_instrumented.data(), sorted.data()); });
  return 0;
}

/// Records of workloads.c's `records`: payloads of 8 to 28 bytes; one record in 32 has a corrupted checksum and
/// one in 32 an unknown tag, so that every branch site sees both outcomes.
std::vector<uint8_t> make_records(size_t count, std::mt19937& random) {
  std::vector<uint8_t> buffer;
  for (size_t r = 0; r < count; ++r) {
    uint32_t choice = random();
    unsigned length = 8 + choice % 21;
    uint8_t tag = (choice >> 8) % 32 == 0 ? static_cast<uint8_t>(4 + (choice >> 16) % 252) : (choice >> 16) & 3;
    buffer.push_back(tag);
    buffer.push_back(static_cast<uint8_t>(length));
    uint32_t sum1 = 0, sum2 = 0;
    for (unsigned i = 0; i < length; ++i) {
      uint8_t byte = static_cast<uint8_t>(random());
      buffer.push_back(byte);
      sum1 = (sum1 + byte) % 255;
      sum2 = (sum2 + sum1) % 255;
    }
    if ((choice >> 24) % 32 == 0) sum1 = (sum1 + 1) % 255;  // corrupted
    buffer.push_back(static_cast<uint8_t>(sum1));
    buffer.push_back(static_cast<uint8_t>(sum2));
  }
  return buffer;
}

int child_records(double scale, bool amortized) {
  // 8192 records (about 230 KB, within a core's L2 cache, as the dense workload's tables are) parsed `passes`
  // times per round.
  constexpr size_t kRecords = 8192;
  const size_t passes = std::max<size_t>(1, static_cast<size_t>(75 * scale));
  std::mt19937 random(42);
  std::vector<uint8_t> buffer = make_records(kRecords, random);
  uint32_t tallies_plain[4] = {}, tallies_instrumented[4] = {};
  compare(
      kRounds, kRecords * passes,
      [&] {
        for (size_t p = 0; p < passes; ++p) g_sink = records_plain(buffer.data(), buffer.size(), tallies_plain);
      },
      [&] {
        for (size_t p = 0; p < passes; ++p) {
          g_sink = (amortized ? records_region : records_instrumented)(buffer.data(), buffer.size(),
                                                                      tallies_instrumented);
        }
      });
  return 0;
}

int child_report(double scale) {
  const uint32_t sites = static_cast<uint32_t>(1e6 * std::max(scale, 0.01));
  // Counters as a real report has them: mostly zeros and small numbers, some large.
  static std::vector<uint64_t> values(static_cast<size_t>(sites) * 2);
  std::mt19937_64 random(7);
  for (uint64_t& v : values) {
    uint64_t r = random();
    v = (r & 3) == 0 ? (r >> 8) % 100000 : (r & 3) == 1 ? (r >> 8) % 10 : 0;
  }
  static sampler_scheme scheme = {"branches", sites, 2, SAMPLER_SCHEME_COUNTERS, 0, values.data(), nullptr, nullptr,
                                  nullptr};
  static sampler_unit unit = {SAMPLER_ABI_VERSION, 1, "feedfacefeedfacefeedfacefeedface", &scheme, nullptr, 0};
  sampler_register_unit(&unit);
  double seconds = seconds_of([] { sampler_finish_report(); });
  std::printf("%.6f %u\n", seconds, sites);
  return 0;
}

// ------------------------------------------------------------------------------------------- the parent

std::string run_child(const char* self, const std::string& mode, double scale, const std::vector<std::string>& env) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "SAMPLER_", 8) != 0) environment.emplace_back(*e);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string scale_text = std::to_string(scale);
  std::string mode_copy = mode;
  char child_flag[] = "--child";
  char* argv[] = {const_cast<char*>(self), child_flag, mode_copy.data(), scale_text.data(), nullptr};
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) std::exit(1);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  pid_t pid;
  if (posix_spawn(&pid, self, &actions, nullptr, argv, envp.data()) != 0) {
    std::perror("posix_spawn");
    std::exit(1);
  }
  close(pipe_fds[1]);
  std::string out;
  char buffer[4096];
  ssize_t got;
  while ((got = read(pipe_fds[0], buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(got));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "runtime_bench: child %s failed\n", mode.c_str());
    std::exit(1);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--child") == 0) {
    double scale = argc >= 4 ? std::atof(argv[3]) : 1.0;
    std::string mode = argv[2];
    if (mode == "fast") return child_fast_path(scale);
    if (mode == "dense") return child_dense(scale);
    if (mode == "records") return child_records(scale, false);
    if (mode == "records-region") return child_records(scale, true);
    if (mode == "report") return child_report(scale);
    return 2;
  }
  double scale = argc >= 2 ? std::atof(argv[1]) : 1.0;
  if (!(scale > 0)) {
    std::fprintf(stderr, "usage: runtime_bench [SCALE]\n");
    return 2;
  }
  const char* self = "/proc/self/exe";
  char path[4096];
  ssize_t length = readlink(self, path, sizeof path - 1);
  if (length <= 0) return 1;
  path[length] = '\0';

  std::printf("runtime benchmarks (%d rounds each: best times, median ratio; baseline = the same code built "
              "uninstrumented)\n",
              kRounds);
  {
    double plain, instrumented, ratio;
    unsigned long long n;
    std::sscanf(run_child(path, "fast", scale, {}).c_str(), "%lf %lf %lf %llu", &plain, &instrumented, &ratio, &n);
    std::printf("fast path, sampling off:  %.2f ns per iteration uninstrumented, %.2f instrumented: %.2f ns per "
                "site, ratio %.2f\n",
                plain / n * 1e9, instrumented / n * 1e9, (instrumented - plain) / n * 1e9, ratio);
  }
  // Both dense workloads of workloads.c, labelled by their density (executed instructions per site, counted in
  // the uninstrumented build: see workloads.c). The goals are the runtime's speed goals, set for a site every few dozen
  // instructions; the denser workload is held to them too, as a harder case.
  struct Workload {
    const char* mode;
    const char* label;
  };
  for (const Workload& workload : {Workload{"records", "records, a site every ~40 instructions"},
                                   Workload{"records-region", "records, SAMPLER_REGION: one check per record"},
                                   Workload{"dense", "hash+search, a site every ~21 instructions"}}) {
    for (const char* sparsity : {"1000", "100", "off"}) {
      double plain, instrumented, ratio;
      unsigned long long n;
      std::vector<std::string> env;
      if (std::strcmp(sparsity, "off") != 0) env = {std::string("SAMPLER_SPARSITY=") + sparsity, "SAMPLER_SEED=1"};
      std::sscanf(run_child(path, workload.mode, scale, env).c_str(), "%lf %lf %lf %llu", &plain, &instrumented,
                  &ratio, &n);
      const char* goal = std::strcmp(sparsity, "1000") == 0 ? " (goal <= 5%)"
                         : std::strcmp(sparsity, "100") == 0 ? " (goal <= 15%)"
                                                             : " (reference: the fast path alone)";
      std::printf("dense workload (%s), sparsity %-4s: %.2f ns per iteration uninstrumented, %.2f instrumented: "
                  "overhead %+.1f%%%s\n",
                  workload.label, sparsity, plain / n * 1e9, instrumented / n * 1e9, (ratio - 1) * 100, goal);
    }
  }
  {
    char directory[] = "/tmp/sampler-runtime-bench-XXXXXX";
    if (mkdtemp(directory) == nullptr) return 1;
    std::string file = std::string(directory) + "/report.txt";
    double seconds;
    unsigned sites;
    std::sscanf(run_child(path, "report", scale, {"SAMPLER_FILE=" + file}).c_str(), "%lf %u", &seconds, &sites);
    struct stat info {};
    stat(file.c_str(), &info);
    std::printf("report of %u sites: %.1f MB in %.3f s: %.0f MB/s (goal >= 100)\n", sites, info.st_size / 1e6,
                seconds, info.st_size / 1e6 / seconds);
    unlink(file.c_str());
    rmdir(directory);
  }
  return 0;
}
