// Benchmark of the text-format parsers against `wc -l` on the same files, in the same run.
//
// Generates a report (one samples subreport of many sections, then a main-backtrace) and a site-info text of
// the requested size in a temporary directory, then times, each in a child process so that its peak RSS is
// its own: `wc -l`, read_samples over the mapped report and over a descriptor, and parse_site_info over the
// mapped site info. Prints the times, the ratio to `wc -l` (goal: <= 2) and the peak RSS beyond the mapping
// (goal: the same for both sizes measured: the parsers' memory does not grow with the input).
//
// usage: text_formats_bench [SIZE_MIB [DIR]]    default 256 MiB in $TMPDIR or /tmp; also runs SIZE/4.
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sections/diagnostics.h"
#include "sections/line_reader.h"
#include "sections/report.h"
#include "sections/site_info.h"

extern char** environ;

namespace {

using sampler::DiagnosticList;
using sampler::LineReader;

// xorshift64: fast, deterministic input.
struct Random {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

void write_all(int fd, const std::string& text) {
  size_t at = 0;
  while (at < text.size()) {
    ssize_t n = write(fd, text.data() + at, text.size() - at);
    if (n <= 0) {
      perror("write");
      exit(1);
    }
    at += static_cast<size_t>(n);
  }
}

std::string unit_for(uint64_t n) {
  char unit[33];
  snprintf(unit, sizeof unit, "%016" PRIx64 "%016" PRIx64, static_cast<uint64_t>(n * 0x9e3779b97f4a7c15ull), n);
  return unit;
}

// Counters as a real samples section has them: mostly zeros and small numbers.
void append_counter(std::string& out, Random& random) {
  uint64_t r = random.next();
  switch (r & 7) {
    case 0: case 1: case 2: case 3: out += '0'; break;
    case 4: case 5: out += std::to_string((r >> 8) % 10); break;
    case 6: out += std::to_string((r >> 8) % 1000); break;
    default: out += std::to_string((r >> 8) % 10000000); break;
  }
}

void generate_report(const std::string& path, size_t size) {
  static const struct { const char* scheme; int counters; } kSchemes[] = {
      {"branches", 2}, {"returns", 3}, {"scalar-pairs", 3}, {"function-entries", 1}, {"float-kinds", 9}};
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) { perror(path.c_str()); exit(1); }
  Random random;
  std::string chunk = "<report id=\"samples\">\n";
  size_t written = 0;
  for (uint64_t section = 0; written + chunk.size() < size; ++section) {
    const auto& scheme = kSchemes[section % 5];
    chunk += "<samples unit=\"" + unit_for(section / 5) + "\" scheme=\"" + scheme.scheme + "\">\n";
    for (int site = 0; site < 1000; ++site) {
      for (int c = 0; c < scheme.counters; ++c) {
        if (c > 0) chunk += '\t';
        append_counter(chunk, random);
      }
      chunk += '\n';
    }
    chunk += "</samples>\n";
    if (chunk.size() > (4u << 20)) {
      write_all(fd, chunk);
      written += chunk.size();
      chunk.clear();
    }
  }
  chunk += "</report>\n<report id=\"main-backtrace\">\n{{{reset}}}\n{{{module:0:app:elf:0123456789abcdef}}}\n"
           "{{{mmap:0x400000:0x2000:load:0:rx:0x0}}}\nsignal:11:SIGSEGV:0x0\ncbf:AAECAwQ=\n</report>\n";
  write_all(fd, chunk);
  close(fd);
}

void generate_sites(const std::string& path, size_t size) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) { perror(path.c_str()); exit(1); }
  Random random;
  std::string chunk;
  size_t written = 0;
  for (uint64_t section = 0; written + chunk.size() < size; ++section) {
    chunk += "<sites unit=\"" + unit_for(section) + "\" scheme=\"branches\">\n";
    for (int site = 0; site < 1000; ++site) {
      uint64_t r = random.next();
      chunk += "src/module" + std::to_string(section % 97) + "/file" + std::to_string(section) + ".c\t" +
               std::to_string(r % 5000) + "\tfunction_" + std::to_string((r >> 16) % 300) + "\t" +
               std::to_string((r >> 32) % 64) + "\tcount < limit && p->next != 0\n";
    }
    chunk += "</sites>\n";
    chunk.append(static_cast<size_t>(random.next() % 8), '\0');  // linker padding between units
    if (chunk.size() > (4u << 20)) {
      write_all(fd, chunk);
      written += chunk.size();
      chunk.clear();
    }
  }
  write_all(fd, chunk);
  close(fd);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Measure {
  double seconds = 0;
  long peak_rss_kib = 0;     // the whole process (rusage), shared pages from the parent included
  long growth_kib = -1;      // the child's peak RSS minus its RSS before the work (parsers only)
  uint64_t checksum = 0;
};

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM").
long status_kib(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long value = -1;
  size_t length = strlen(field);
  while (fgets(line, sizeof line, f) != nullptr) {
    if (strncmp(line, field, length) == 0 && line[length] == ':') value = strtol(line + length + 1, nullptr, 10);
  }
  fclose(f);
  return value;
}

// Runs `work` in a child process; returns its wall time (measured around the work only), its peak RSS and
// what it computed (so that the work cannot be optimised away and can be checked).
Measure in_child(const std::function<uint64_t()>& work) {
  int fds[2];
  if (pipe(fds) != 0) { perror("pipe"); exit(1); }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    long rss_before = status_kib("VmRSS");
    double start = now();
    uint64_t checksum = work();
    double seconds = now() - start;
    long growth = status_kib("VmHWM") - rss_before;
    if (write(fds[1], &seconds, sizeof seconds) != sizeof seconds) _exit(1);
    if (write(fds[1], &growth, sizeof growth) != sizeof growth) _exit(1);
    if (write(fds[1], &checksum, sizeof checksum) != sizeof checksum) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  Measure m;
  if (read(fds[0], &m.seconds, sizeof m.seconds) != sizeof m.seconds ||
      read(fds[0], &m.growth_kib, sizeof m.growth_kib) != sizeof m.growth_kib ||
      read(fds[0], &m.checksum, sizeof m.checksum) != sizeof m.checksum) {
    fprintf(stderr, "child failed\n");
    exit(1);
  }
  close(fds[0]);
  int status;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  m.peak_rss_kib = usage.ru_maxrss;
  return m;
}

// `wc -l FILE`, output discarded; the time includes starting wc (about a millisecond).
Measure wc_lines(const std::string& path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const char* argv[] = {"wc", "-l", path.c_str(), nullptr};
  double start = now();
  pid_t pid;
  if (posix_spawnp(&pid, "wc", &actions, nullptr, const_cast<char**>(argv), environ) != 0) {
    perror("wc");
    exit(1);
  }
  int status;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  Measure m;
  m.seconds = now() - start;
  m.peak_rss_kib = usage.ru_maxrss;
  posix_spawn_file_actions_destroy(&actions);
  return m;
}

// The best of three runs (the files are in the page cache after the first).
Measure best_of(const std::function<Measure()>& run) {
  Measure best = run();
  for (int i = 0; i < 2; ++i) {
    Measure m = run();
    if (m.seconds < best.seconds) best = m;
  }
  return best;
}

class CountingSamples : public sampler::SamplesVisitor {
 public:
  void begin_section(const sampler::SampleSectionHeader&) override { ++sections; }
  void section_line(std::string_view line, uint64_t) override {
    ++lines;
    bytes += line.size();
  }
  uint64_t sections = 0, lines = 0, bytes = 0;
};

// The same counts, taking runs of section lines in bulk (SamplesVisitor::section_lines).
class BulkCountingSamples : public CountingSamples {
 public:
  void section_lines(std::string_view run, uint64_t) override {
    uint64_t count = count_newlines(run);
    lines += count;
    bytes += run.size() - count;  // without the newlines, as section_line counts
  }

 private:
  // What a bulk consumer does first: count the lines, 16 bytes at a time.
  static uint64_t count_newlines(std::string_view run) {
    uint64_t count = 0;
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i newline = _mm_set1_epi8('\n');
    while (run.size() - i >= 16) {
      size_t rounds = std::min<size_t>((run.size() - i) / 16, 255);
      __m128i acc = _mm_setzero_si128();
      for (size_t r = 0; r < rounds; ++r, i += 16) {
        acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(run.data() + i)),
                                               newline));
      }
      __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
      count += static_cast<uint64_t>(_mm_cvtsi128_si32(sums)) +
               static_cast<uint64_t>(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
    }
#endif
    for (; i < run.size(); ++i) count += run[i] == '\n';
    return count;
  }
};

struct Mapping {
  explicit Mapping(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(path.c_str()); exit(1); }
    size = static_cast<size_t>(st.st_size);
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    madvise(p, size, MADV_SEQUENTIAL);
    close(fd);
    data = static_cast<const char*>(p);
  }
  ~Mapping() { munmap(const_cast<char*>(data), size); }
  const char* data;
  size_t size;
};

template <class Visitor>
uint64_t samples_mapped(const std::string& path) {
  Mapping map(path);
  DiagnosticList diagnostics;
  LineReader input(std::string_view(map.data, map.size), path, diagnostics);
  Visitor visitor;
  bool ok = sampler::read_samples(input, visitor);
  if (!ok || !diagnostics.items.empty()) _exit(2);
  return visitor.lines * 1000003 + visitor.bytes + visitor.sections;
}

template <class Visitor>
uint64_t samples_fd(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  DiagnosticList diagnostics;
  LineReader input(fd, path, diagnostics);
  Visitor visitor;
  bool ok = sampler::read_samples(input, visitor);
  close(fd);
  if (!ok || !diagnostics.items.empty()) _exit(2);
  return visitor.lines * 1000003 + visitor.bytes + visitor.sections;
}

uint64_t sites_mapped(const std::string& path) {
  Mapping map(path);
  DiagnosticList diagnostics;
  uint64_t sites = 0, sections = 0, bytes = 0;
  bool ok = sampler::parse_site_info(
      std::string_view(map.data, map.size), path,
      [&](const sampler::SitesSection& s) {
        sites += s.site_count;
        bytes += s.body.size();
        ++sections;
      },
      diagnostics);
  if (!ok) _exit(2);
  return sites * 1000003 + bytes + sections;
}

struct Row {
  std::string name;
  Measure m;
  double baseline;
  size_t mapped_bytes;  // the file mapping counted in the peak RSS
};

// The parser's own peak memory: its growth beyond the RSS it started with, less the file mapping it touched.
double own_mib(const Row& r) { return r.m.growth_kib / 1024.0 - r.mapped_bytes / 1048576.0; }

void print_rows(const std::vector<Row>& rows) {
  printf("  %-38s %8s %8s %16s %18s\n", "", "seconds", "x wc -l", "peak RSS (MiB)", "parser's own (MiB)");
  for (const Row& r : rows) {
    char own[32] = "";
    if (r.m.growth_kib >= 0) snprintf(own, sizeof own, "%.1f", own_mib(r));
    printf("  %-38s %8.3f %8.2f %16.1f %18s\n", r.name.c_str(), r.m.seconds, r.m.seconds / r.baseline,
           r.m.peak_rss_kib / 1024.0, own);
  }
}

std::vector<Row> run_size(const std::string& dir, size_t mib) {
  std::string report = dir + "/report-" + std::to_string(mib) + ".txt";
  std::string sites = dir + "/sites-" + std::to_string(mib) + ".sites";
  generate_report(report, mib << 20);
  generate_sites(sites, mib << 20);
  struct stat report_stat, sites_stat;
  stat(report.c_str(), &report_stat);
  stat(sites.c_str(), &sites_stat);
  size_t report_size = static_cast<size_t>(report_stat.st_size);
  size_t sites_size = static_cast<size_t>(sites_stat.st_size);

  std::vector<Row> rows;
  Measure wc_report = best_of([&] { return wc_lines(report); });
  rows.push_back({"wc -l report", wc_report, wc_report.seconds, 0});
  rows.push_back({"read_samples, bulk (mapped file)",
                  best_of([&] { return in_child([&] { return samples_mapped<BulkCountingSamples>(report); }); }),
                  wc_report.seconds, report_size});
  rows.push_back({"read_samples, bulk (descriptor)",
                  best_of([&] { return in_child([&] { return samples_fd<BulkCountingSamples>(report); }); }),
                  wc_report.seconds, 0});
  rows.push_back({"read_samples, per line (mapped file)",
                  best_of([&] { return in_child([&] { return samples_mapped<CountingSamples>(report); }); }),
                  wc_report.seconds, report_size});
  Measure wc_sites = best_of([&] { return wc_lines(sites); });
  rows.push_back({"wc -l sites", wc_sites, wc_sites.seconds, 0});
  rows.push_back({"parse_site_info (mapped file)", best_of([&] { return in_child([&] { return sites_mapped(sites); }); }),
                  wc_sites.seconds, sites_size});
  if (rows[1].m.checksum != rows[2].m.checksum || rows[1].m.checksum != rows[3].m.checksum) {
    fprintf(stderr, "the read_samples runs disagree\n");
    exit(1);
  }
  printf("inputs: report %.1f MiB, site info %.1f MiB\n", report_size / 1048576.0, sites_size / 1048576.0);
  print_rows(rows);
  unlink(report.c_str());
  unlink(sites.c_str());
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  const char* tmp = getenv("TMPDIR");
  std::string parent = argc > 2 ? argv[2] : (tmp != nullptr ? tmp : "/tmp");
  std::string dir_template = parent + "/sampler-text-bench-XXXXXX";
  std::vector<char> dir_buffer(dir_template.begin(), dir_template.end());
  dir_buffer.push_back('\0');
  if (mib == 0 || mkdtemp(dir_buffer.data()) == nullptr) {
    fprintf(stderr, "usage: text_formats_bench [SIZE_MIB [DIR]]\n");
    return 2;
  }
  std::string dir = dir_buffer.data();
  printf("text formats benchmark (goals: parsers <= 2x wc -l; peak RSS beyond the mapping independent of size)\n");
  std::vector<Row> big = run_size(dir, mib);
  std::vector<Row> small = run_size(dir, mib / 4 != 0 ? mib / 4 : 1);
  rmdir(dir.c_str());
  printf("summary (the parser's own memory is its peak RSS growth less the file mapping it reads):\n");
  size_t small_mib = mib / 4 != 0 ? mib / 4 : 1;
  for (size_t i = 0; i < big.size(); ++i) {
    if (big[i].name.rfind("wc", 0) == 0) continue;
    double ratio = big[i].m.seconds / big[i].baseline;
    printf("  %-38s %.2fx wc -l (%s); own memory %.1f MiB at %zu MiB, %.1f MiB at %zu MiB\n", big[i].name.c_str(),
           ratio, ratio <= 2.0 ? "goal met" : "goal missed", own_mib(big[i]), mib, own_mib(small[i]), small_mib);
  }
  return 0;
}
