// sampler-analyze's benchmark helpers (bench/analysis/analyze_bench.sh runs them; not run by ctest).
//
//   analysis_bench generate DIR REPORTS SITES
//       DIR/app.sites (SITES sites in units of 100: branches and returns units alternating) and REPORTS reports
//       DIR/reports/NNN/run-N.txt. One run in 10 fails (a main-backtrace subreport); in failing runs the branch
//       of unit 0's site 7 is true, so the ranking has a known top. Counters are sparse, as sampling leaves them.
//   analysis_bench rank RUNS PREDICATES
//       Ranking with iterative elimination over RUNS synthetic runs and PREDICATES predicates (2 per site, 30
//       true per run, 5 planted causes), timed in-process: prints "rank: R runs x P predicates: S s, N rounds".
//   analysis_bench maxrss COMMAND ARGS...
//       Runs COMMAND (output to /dev/null) and prints "maxrss: N KB, cpu: S s" of it (its peak resident memory and
//       its user + system time, from wait4's rusage): CPU time measures per-core speed on a busy machine too.
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "analysis/ranking.h"
#include "analysis/runs.h"

namespace {

std::string unit_name(unsigned u) {
  char text[40];
  std::snprintf(text, sizeof text, "%08x%08x%08x%08x", u + 1, u * 7 + 3, u * 13 + 5, u * 31 + 9);
  return text;
}

int generate(const std::string& dir, unsigned long reports, unsigned long sites) {
  namespace fs = std::filesystem;
  fs::create_directories(dir + "/reports");
  unsigned units = static_cast<unsigned>((sites + 99) / 100);
  {
    std::string text;
    for (unsigned u = 0; u < units; ++u) {
      bool branches = u % 2 == 0;
      text += "<sites unit=\"" + unit_name(u) + "\" scheme=\"" + (branches ? "branches" : "returns") + "\">\n";
      for (unsigned i = 0; i < 100; ++i) {
        text += "src/file_" + std::to_string(u) + ".c\t" + std::to_string(10 + i * 3) + "\tfunction_" +
                std::to_string(u) + "_" + std::to_string(i / 10) + "\t" + std::to_string(i) + "\t" +
                (branches ? "p_" + std::to_string(i) + " != 0" : "callee_" + std::to_string(i)) + "\n";
      }
      text += "</sites>\n";
    }
    FILE* out = std::fopen((dir + "/app.sites").c_str(), "w");
    if (out == nullptr) return 1;
    std::fwrite(text.data(), 1, text.size(), out);
    std::fclose(out);
  }
  std::mt19937_64 random(42);
  std::string text;
  for (unsigned long r = 0; r < reports; ++r) {
    bool failing = r % 10 == 3;
    text.clear();
    text += "<report id=\"samples\">\n";
    for (unsigned u = 0; u < units; ++u) {
      bool branches = u % 2 == 0;
      text += "<samples unit=\"" + unit_name(u) + "\" scheme=\"" + (branches ? "branches" : "returns") + "\">\n";
      for (unsigned i = 0; i < 100; ++i) {
        uint64_t bits = random();
        if (branches) {
          unsigned f = static_cast<unsigned>(bits % 40), t = static_cast<unsigned>((bits >> 8) % 3);
          if (u == 0 && i == 7) t = failing ? 1 + static_cast<unsigned>(bits % 5) : 0;
          text += std::to_string(f) + "\t" + std::to_string(t) + "\n";
        } else {
          text += std::to_string((bits >> 16) % 4) + "\t" + std::to_string((bits >> 24) % 90) + "\t" +
                  std::to_string((bits >> 32) % 2) + "\n";
        }
      }
      text += "</samples>\n";
    }
    text += "</report>\n";
    if (failing) {
      text += "<report id=\"main-backtrace\">\n{{{reset}}}\n{{{module:0:app:elf:0123456789abcdef}}}\n"
              "{{{mmap:0x555555554000:0x10000:load:0:rx:0x0}}}\nsignal:11:SIGSEGV:0x0\n"
              "cbf:Ah1Vv9LaBNQtf1p6nGJKIQC7LVW/0toOEQA=\n</report>\n";
    }
    std::string sub = dir + "/reports/" + std::to_string(r / 1000);
    if (r % 1000 == 0) fs::create_directories(sub);
    FILE* out = std::fopen((sub + "/run-" + std::to_string(r) + ".txt").c_str(), "w");
    if (out == nullptr) return 1;
    std::fwrite(text.data(), 1, text.size(), out);
    std::fclose(out);
  }
  return 0;
}

int rank_bench(unsigned long runs_count, unsigned long predicates) {
  using namespace sampler::analysis;
  RunSet runs;
  std::mt19937_64 random(7);
  uint32_t sites = static_cast<uint32_t>(predicates / 2);
  std::vector<uint32_t> observed, truth;
  for (unsigned long r = 0; r < runs_count; ++r) {
    bool failing = r % 10 < 2;
    observed.clear();
    truth.clear();
    for (int k = 0; k < 30; ++k) {
      uint32_t site = static_cast<uint32_t>(random() % sites);
      observed.push_back(site);
      truth.push_back(site * 2 + static_cast<uint32_t>(random() % 2));
    }
    // Five causes (predicates 1, 3, 5, 7, 9): each failing run has one.
    if (failing) truth.push_back(static_cast<uint32_t>(2 * ((r / 10) % 5) + 1));
    for (uint32_t s = 0; s < 5; ++s) observed.push_back(s);
    std::sort(observed.begin(), observed.end());
    observed.erase(std::unique(observed.begin(), observed.end()), observed.end());
    std::sort(truth.begin(), truth.end());
    truth.erase(std::unique(truth.begin(), truth.end()), truth.end());
    runs.add("", failing, failing, -1, observed, truth);
  }
  std::vector<uint32_t> predicate_site(predicates);
  for (uint32_t p = 0; p < predicates; ++p) predicate_site[p] = p / 2;
  auto start = std::chrono::steady_clock::now();
  Ranking ranking = rank(runs, predicate_site, sites, RankOptions{});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("rank: %lu runs x %lu predicates: %.3f s, %zu rounds, %zu predictive in round 1\n", runs_count,
              predicates, seconds, ranking.rounds.size(), ranking.first.size());
  return 0;
}

int maxrss(char** argv) {
  pid_t child = fork();
  if (child == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(child, &status, 0, &usage);
  double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::printf("maxrss: %ld KB, cpu: %.3f s\n", usage.ru_maxrss, cpu);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "generate") == 0) {
    return generate(argv[2], std::strtoul(argv[3], nullptr, 10), std::strtoul(argv[4], nullptr, 10));
  }
  if (argc == 4 && std::strcmp(argv[1], "rank") == 0) {
    return rank_bench(std::strtoul(argv[2], nullptr, 10), std::strtoul(argv[3], nullptr, 10));
  }
  if (argc >= 3 && std::strcmp(argv[1], "maxrss") == 0) return maxrss(argv + 2);
  std::fprintf(stderr, "usage: analysis_bench generate DIR REPORTS SITES | rank RUNS PREDICATES | maxrss CMD...\n");
  return 2;
}
