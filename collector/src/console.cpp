// The console's pages (collector/console.h). Every text that comes from a report, a key's application name,
// site information or a symbol file reaches the page through analysis::html_escape, and every one that goes
// into a link through percent_encode.
#include "collector/console.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "analysis/crash_signature.h"
#include "analysis/crash_symbols.h"
#include "analysis/html.h"
#include "analysis/id_list.h"
#include "analysis/ranking.h"
#include "analysis/run_summary.h"
#include "analysis/runs.h"
#include "sections/diagnostics.h"
#include "sections/hex.h"
#include "sections/lines.h"
#include "sections/markup.h"
#include "sections/sites_index.h"
#include "store/files.h"

namespace sampler::collector {
namespace {

using analysis::html_escape;

constexpr size_t kLatestRuns = 20;      // rows of an application's "latest runs"
constexpr int64_t kChartDays = 60;      // a release's chart shows at most its last 60 days
constexpr size_t kStackFrames = 64;     // frames of a sample run's stack on the crash group's row
constexpr size_t kCrashFrames = 3;      // frames that group crashes: sampler-analyze's default (--crash-frames)
constexpr size_t kSignedStackBytes = 64u << 20;  // the distinct stacks a page keeps with their signatures

std::string utc(int64_t seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
  return text;
}

// What a page that may be served again says of itself: when it was made, and for how long it may be served.
std::string made_line(double window) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char made[32], seconds[32];
  std::strftime(made, sizeof made, "%Y-%m-%d %H:%M:%S", &tm);
  std::snprintf(seconds, sizeof seconds, "%g", window);
  return "<p id=\"made\">Made " + std::string(made) + " UTC, and shown again for up to " + seconds +
         " s unless runs or symbols come here.</p>\n";
}

std::string outcome_text(const store::Run& run) {
  if (run.signal) {
    const char* name = sigabbrev_np(*run.signal);
    return name != nullptr ? "SIG" + std::string(name) : "signal " + std::to_string(*run.signal);
  }
  if (run.exit_status) return "exit " + std::to_string(*run.exit_status);
  return "unknown";
}

std::string html_link(std::string_view href, std::string_view text_html) {
  return "<a href=\"" + html_escape(href) + "\">" + std::string(text_html) + "</a>";
}

std::string app_path(std::string_view app) { return "/ui/app/" + percent_encode(app) + "/"; }

// A samples section's key in the store's counts (store.h, SectionCounts): what decides whether a page's site
// information takes the section (read_runs()'s checks of a summary's section), then the scheme, length first,
// and the unit: "LINES STATE MALFORMED-INDEX COUNTERS SCHEME-LENGTH:SCHEMEUNIT".
struct SectionShape {
  uint64_t lines = 0, state = 0, malformed_index = 0, counters = 0;
  std::string scheme, unit;
};

std::string section_key(const analysis::SummarySection& section) {
  return std::to_string(section.lines) + " " +
         std::to_string((section.complete ? 1 : 0) | (section.malformed ? 2 : 0)) + " " +
         std::to_string(section.malformed_index) + " " + std::to_string(section.counters) + " " +
         std::to_string(section.scheme.size()) + ":" + std::string(section.scheme) + std::string(section.unit);
}

bool parse_section_key(std::string_view key, SectionShape& shape) {
  auto number = [&key](uint64_t& value, char end) {
    const size_t at = key.find(end);
    if (at == std::string_view::npos || at == 0) return false;
    value = 0;
    for (char ch : key.substr(0, at)) {
      if (ch < '0' || ch > '9' || value > (UINT64_MAX - 9) / 10) return false;
      value = value * 10 + static_cast<uint64_t>(ch - '0');
    }
    key.remove_prefix(at + 1);
    return true;
  };
  uint64_t scheme_size = 0;
  if (!number(shape.lines, ' ') || !number(shape.state, ' ') || !number(shape.malformed_index, ' ') ||
      !number(shape.counters, ' ') || !number(scheme_size, ':') || scheme_size > key.size())
    return false;
  shape.scheme = key.substr(0, scheme_size);
  shape.unit = key.substr(scheme_size);
  return true;
}

}  // namespace

// One application's stored runs, read for the statistics by the analysis library. Stored run s is numbered in
// the order the store returns them (oldest first); what the predictor pages need of every stored run is in the
// columns below, its whole store::Run only while it is read (`stored`, from `first_stored` on: the runs kept
// between pages drop theirs once read, KeptApp).
struct AppRuns {
  size_t first_stored = 0;               // stored[0] is stored run first_stored
  std::vector<store::Run> stored;        // stored runs first_stored and after
  std::vector<int64_t> stored_id;        // stored run -> its id in the store (Run::stored_id)
  std::vector<uint8_t> interim;          // stored run -> 1: its report is interim (the run is still going)
  std::vector<uint32_t> signature_of;    // stored run -> index into signatures
  std::vector<std::string> signatures;   // the runs' crash signatures as the collector hashed them ("" first)
  std::map<std::string, uint32_t, std::less<>> signature_index;  // signature -> index into signatures
  std::vector<size_t> stored_of;         // read run -> stored run
  std::vector<int32_t> group_of;         // stored run -> crash group (-1: none, or not read)
  std::vector<std::string> releases;     // versions, in the order of their first runs
  std::map<std::string, size_t> release_index;  // version -> index into releases
  std::vector<size_t> release_of;        // stored run -> index into releases
  SerializedList problems;               // reading the runs and the symbols (from the reading threads)
  std::unique_ptr<analysis::StoreSymbols> symbols;  // the application's symbols, as the collector stored them
  std::unique_ptr<SitesIndex> sites;     // the application's site information, which the reader refers to
  std::unique_ptr<analysis::RunReader> reader;
  bool have_sites = false;

  const analysis::ReadResult& read() const { return reader->result(); }
  analysis::ReadResult& read() { return reader->result(); }
  size_t stored_count() const { return stored_id.size(); }
  store::Run& run(size_t s) { return stored[s - first_stored]; }
  const store::Run& run(size_t s) const { return stored[s - first_stored]; }

  // Appends a stored run (the store's order).
  void add(const store::Run& run) {
    stored.push_back(run);
    stored_id.push_back(run.stored_id);
    interim.push_back(run.interim_sequence ? 1 : 0);
    auto [signature, added] =
        signature_index.emplace(run.crash_signature, static_cast<uint32_t>(signatures.size()));
    if (added) signatures.push_back(run.crash_signature);
    signature_of.push_back(signature->second);
    auto [release, new_release] = release_index.emplace(run.version, releases.size());
    if (new_release) releases.push_back(run.version);
    release_of.push_back(release->second);
    group_of.push_back(-1);
  }
  // Drops the whole store::Run of the stored runs before `end`, once read (their columns stay).
  void drop_stored(size_t end) {
    stored.erase(stored.begin(), stored.begin() + static_cast<ptrdiff_t>(end - first_stored));
    first_stored = end;
  }

  // What has been read, to go back to (truncate()); taken with no store::Run before it (drop_stored()).
  struct Mark {
    size_t stored = 0, releases = 0, signatures = 0, read = 0, problems = 0;
    analysis::RunReader::Mark reader;
  };
  Mark mark() const {
    return {stored_count(), releases.size(), signatures.size(), stored_of.size(), problems.items.size(),
            reader->mark()};
  }
  void truncate(const Mark& mark) {
    stored.resize(mark.stored - first_stored);
    stored_of.resize(mark.read);
    stored_id.resize(mark.stored);
    interim.resize(mark.stored);
    signature_of.resize(mark.stored);
    group_of.resize(mark.stored);
    release_of.resize(mark.stored);
    for (size_t i = mark.releases; i < releases.size(); ++i) release_index.erase(releases[i]);
    releases.resize(mark.releases);
    for (size_t i = mark.signatures; i < signatures.size(); ++i) signature_index.erase(signatures[i]);
    signatures.resize(mark.signatures);
    problems.items.resize(mark.problems);
    reader->truncate(mark.reader);
  }
  // The bytes it holds (an estimate from the containers' capacities).
  size_t memory() const {
    size_t bytes = reader->memory() + stored.capacity() * sizeof(store::Run) +
                   (stored_of.capacity() + release_of.capacity() + stored_id.capacity()) * sizeof(size_t) +
                   (group_of.capacity() + signature_of.capacity()) * sizeof(int32_t) + interim.capacity();
    for (const store::Run& run : stored) {
      bytes += run.run_id.capacity() + run.version.capacity() + run.crash_signature.capacity() + run.app.capacity() +
               run.summary.capacity() + run.stored_body.capacity();
    }
    for (const std::string& text : signatures) bytes += 2 * (sizeof(std::string) + text.capacity()) + 64;
    for (const std::string& text : releases) bytes += 2 * (sizeof(std::string) + text.capacity()) + 64;
    return bytes;
  }
};

namespace {

// A stored run's report (Query::stored_bodies): false if its body does not decompress.
bool report_text(const store::Run& run, std::string& text) {
  return store::decompress_body(run.stored_body, run.body_size, text);
}

// The application's site information and symbols, and a reader of its runs over them.
void open_app(store::Store& store, const std::string& app, const std::string& site_dir, AppRuns& runs) {
  runs.sites = std::make_unique<SitesIndex>();
  if (!site_dir.empty()) {
    std::error_code ec;
    const std::filesystem::path path = std::filesystem::path(site_dir) / app;
    // The application's name comes from keys.tsv, never from a request: it cannot lead out of SITE_DIR.
    if (std::filesystem::exists(path, ec)) {
      runs.sites->add_path(path.string(), runs.problems);  // its problems are shown on the page
      runs.have_sites = true;
    }
  }
  runs.symbols = std::make_unique<analysis::StoreSymbols>(store, app, runs.problems);
  runs.reader = std::make_unique<analysis::RunReader>(*runs.sites);
}

// Appends the runs `query` selects to the stored runs, oldest first, with their releases in the order their first
// runs were stored (the store returns runs in that order).
bool fetch_runs(store::Store& store, const store::Query& query, AppRuns& runs, std::string& error) {
  // Kept as stored, each decompressed when it is read: 10^5 runs' texts at once took 800 MB.
  return store.for_each(query, [&](const store::Run& run) {
    runs.add(run);
    return true;
  }, error);
}

// Reads stored runs [from, to) through read_runs() (runs.reader), the crashes grouped by symbolized signature with
// the symbols the collector stored for `app` (as sampler-analyze --database groups them). With `crashes_only`,
// only the runs that crashed are read: enough for the crash groups, which come out numbered as when every run is
// read, since only crashes make groups (the application's page counts the others in the database:
// Store::count_days()). The runs' summaries are read instead of their reports (analysis/run_summary.h: a crash's
// summary keeps its stack); a run stored before summaries were kept is summarized from its report here, once:
// its summary is stored for the next page. Each distinct stack is symbolized once.
void read_stored(store::Store& store, const std::string& app, bool crashes_only, size_t from, size_t to,
                 AppRuns& runs) {
  std::vector<std::string> names;
  std::vector<size_t> read_from;  // the reader's input i is stored run read_from[i]
  for (size_t s = from; s < to; ++s) {
    // A run still going is not read: the predictor pages leave it out, and the runs kept between pages may then
    // go on past it (extend_kept()). An interim report holds no crash.
    if (runs.interim[s] || (crashes_only && runs.run(s).crash_signature.empty())) continue;
    names.push_back(runs.run(s).run_id);
    read_from.push_back(s);
  }
  if (names.empty()) return;
  analysis::ReadOptions options;
  options.jobs = 0;  // one reading thread per core, at the page worker's low priority (collector/src/server.cpp)
  options.crash_frames = kCrashFrames;
  // Crashes of one bug share their stack: each distinct stack is symbolized once (by the reading threads).
  std::mutex signed_mutex;
  std::unordered_map<std::string, std::string> signed_stacks;  // stack -> symbolized signature
  size_t signed_bytes = 0;
  options.crash_signer = [&, symbols = runs.symbols.get()](std::string_view body, size_t frames) {
    {
      std::lock_guard<std::mutex> lock(signed_mutex);
      if (auto it = signed_stacks.find(std::string(body)); it != signed_stacks.end()) return it->second;
    }
    std::string signature = analysis::symbolized_crash_signature(body, frames, *symbols);
    std::lock_guard<std::mutex> lock(signed_mutex);
    if (signed_bytes + body.size() <= kSignedStackBytes && signed_stacks.emplace(body, signature).second) {
      signed_bytes += body.size();
    }
    return signature;
  };
  std::vector<uint8_t> summarized(to - from, 0);  // stored run - from -> 1: its summary was made here
  options.summary_of = [&](size_t index) {
    store::Run& run = runs.run(read_from[index]);  // each index comes once, on one thread
    if (run.summary.empty()) {
      thread_local std::string text;
      // A body that does not decompress gives no summary: the run is left out, named among the problems.
      if (report_text(run, text)) {
        run.summary = analysis::summarize_report(text);
        summarized[read_from[index] - from] = 1;
      }
      run.stored_body = std::string();
    }
    return std::string_view(run.summary);
  };
  const size_t first_read = runs.read().runs.size();
  DiagnosticList read_problems;
  runs.reader->read(names, options, read_problems);
  for (Diagnostic& problem : read_problems.items) runs.problems.items.push_back(std::move(problem));
  // The summaries made here, stored a few thousand to a transaction (a write that holds up uploads briefly).
  constexpr size_t kSummariesPerTransaction = 2000;
  std::vector<std::pair<std::string, std::string>> batch;
  for (size_t s = from; s < to; ++s) {
    if (summarized[s - from]) batch.emplace_back(runs.run(s).run_id, runs.run(s).summary);
    if (batch.size() == kSummariesPerTransaction || (s + 1 == to && !batch.empty())) {
      std::string fill_error;
      if (!store.fill_summaries(app, batch, fill_error)) {
        runs.problems.error("store", 0, "cannot store the runs' summaries: " + fill_error);
      }
      batch.clear();
    }
  }

  // The final runs the store keeps no counts of yet (stored before it kept them), added from their summaries.
  if (!crashes_only && store.keeps_counts()) {
    std::vector<std::pair<std::string, std::vector<store::SectionCounts>>> uncounted;
    for (size_t s = from; s < to; ++s) {
      const store::Run& run = runs.run(s);
      if (!run.counted && !run.interim_sequence && !run.summary.empty()) {
        if (std::optional<std::vector<store::SectionCounts>> counts = summary_counts(run.summary)) {
          uncounted.emplace_back(run.run_id, std::move(*counts));
        }
      }
      if (uncounted.size() == kSummariesPerTransaction || (s + 1 == to && !uncounted.empty())) {
        std::string count_error;
        if (!store.add_counts(app, uncounted, count_error)) {
          runs.problems.error("store", 0, "cannot store the runs' counts: " + count_error);
        }
        uncounted.clear();
      }
    }
  }

  std::unordered_map<std::string_view, size_t> by_id;
  for (size_t s = from; s < to; ++s) by_id.emplace(runs.run(s).run_id, s);
  const store::FailureRule rule;  // sampler-analyze --database's default: a signal, or a non-zero exit status
  analysis::RunSet& read = runs.read().runs;
  for (size_t r = first_read; r < read.size(); ++r) {
    const size_t s = by_id.at(read.names[r]);
    runs.stored_of.push_back(s);
    runs.group_of[s] = read.crash_group[r];
    read.failed[r] = rule.failed(runs.run(s)) ? 1 : 0;
  }
}

// Reads every stored run of `app` (only its crashes with `crashes_only`): read_stored() over fetch_runs().
bool load_app(store::Store& store, const std::string& app, const std::string& site_dir, bool crashes_only,
              AppRuns& runs, std::string& error) {
  open_app(store, app, site_dir, runs);
  store::Query query{app, std::nullopt, crashes_only, /*stored_bodies=*/true, /*summaries=*/true};
  if (!fetch_runs(store, query, runs, error)) return false;
  read_stored(store, app, crashes_only, 0, runs.stored_count(), runs);
  return true;
}

// A stored run's stack: the first main-backtrace body, as its summary keeps it and its crash group was made from
// ("" if none, or if the summary is not whole).
std::string_view crash_stack(const store::Run& run) {
  bool have_samples = false;
  std::optional<std::string_view> backtrace;
  if (!analysis::read_summary(run.summary, have_samples, backtrace, [](const analysis::SummarySection&) {}))
    return {};
  return backtrace.value_or(std::string_view());
}

// Runs and failures of a release on one day (days since the epoch, UTC).
struct DayBar {
  uint64_t runs = 0, failures = 0;
};

// A small bar chart: runs per day (light) and failures per day (red) over the release's days, at most its last
// kChartDays. Readable without the picture: its title and the table's figures say the same.
std::string day_chart(const std::map<int64_t, DayBar>& bars) {
  if (bars.empty()) return "";
  const int64_t last = bars.rbegin()->first;
  const int64_t first = std::max(bars.begin()->first, last - kChartDays + 1);
  const int64_t days = last - first + 1;
  std::vector<uint64_t> runs(static_cast<size_t>(days)), failures(static_cast<size_t>(days));
  for (const auto& [day, bar] : bars) {
    if (day < first) continue;
    runs[static_cast<size_t>(day - first)] = bar.runs;
    failures[static_cast<size_t>(day - first)] = bar.failures;
  }
  const uint64_t most = std::max<uint64_t>(1, *std::max_element(runs.begin(), runs.end()));
  const int bar = static_cast<int>(std::clamp<int64_t>(240 / days, 3, 24)), height = 40;
  std::string svg = "<svg class=\"chart\" role=\"img\" width=\"" + std::to_string(bar * days) + "\" height=\"" +
                    std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(bar * days) + " " +
                    std::to_string(height) + "\"><title>runs (light) and failures (red) per day, " +
                    utc(first * 86400).substr(0, 10) + " to " + utc(last * 86400).substr(0, 10) + "</title>";
  for (int64_t d = 0; d < days; ++d) {
    const size_t i = static_cast<size_t>(d);
    for (auto [count, css] : {std::pair{runs[i], "runs"}, std::pair{failures[i], "failures"}}) {
      if (count == 0) continue;
      const int h = std::max(1, static_cast<int>(count * height / most));
      svg += "<rect class=\"" + std::string(css) + "\" x=\"" + std::to_string(d * bar) + "\" y=\"" +
             std::to_string(height - h) + "\" width=\"" + std::to_string(std::max(1, bar - 1)) + "\" height=\"" +
             std::to_string(h) + "\"><title>" + utc((first + d) * 86400).substr(0, 10) + ": " +
             std::to_string(count) + " " + css + "</title></rect>";
    }
  }
  return svg + "</svg>";
}

std::string problems_note(const SerializedList& problems) {
  if (problems.items.empty()) return "";
  return "<p class=\"error\">" + std::to_string(problems.items.size()) + " problem(s) reading the stored runs; the " +
         "first: " + html_escape(problems.items.front().file + ": " + problems.items.front().message) + "</p>\n";
}

// A stored run's stack, symbolized as the crash groups are (kStackFrames frames), one frame per line.
std::string sample_stack(const AppRuns& runs, size_t stored) {
  const std::string signature = analysis::symbolized_crash_signature(crash_stack(runs.run(stored)),
                                                                     kStackFrames, *runs.symbols);
  const size_t at = signature.find(" at ");
  if (at == std::string::npos) return "";
  std::string out = "<div class=\"where\">run <code>" + html_escape(runs.run(stored).run_id) +
                    "</code>:</div><ol class=\"stack\" start=\"0\">";
  std::string_view rest = std::string_view(signature).substr(at + 4);
  for (;;) {
    const size_t next = rest.find(" < ");
    out += "<li>" + html_escape(rest.substr(0, next)) + "</li>";
    if (next == std::string_view::npos) break;
    rest.remove_prefix(next + 3);
  }
  return out + "</ol>";
}

// The modules of the crashes' module maps that have a build ID but no symbols stored for the application (no GSYM
// file, no ranges): their frames show as module+offset until someone pushes them. System libraries are left out,
// as crash signatures skip them. Found through the same StoreSymbols the stacks were symbolized with (its files
// are fetched once per build ID).
std::string missing_symbols(const AppRuns& runs) {
  struct Module {
    std::string name;
    uint64_t crashes = 0;
  };
  std::map<std::string, Module> missing;
  std::set<std::string> have;
  for (size_t s = 0; s < runs.stored_count(); ++s) {
    if (runs.group_of[s] < 0) continue;
    std::set<std::string> seen;  // a build ID counts once per crash
    std::string_view body = crash_stack(runs.run(s));
    while (!body.empty()) {
      // A line that is one {{{module:ID:NAME:elf:BUILDID}}} element (docs/formats.md, section 3: NAME holds no
      // ':'), with exactly its four fields and a build ID of whole bytes.
      const std::string_view line = text::take_line(body);
      markup::Tokenizer tokens(line);
      markup::Node node;
      markup::ModuleElement element;
      markup::ParseError malformed;
      if (!tokens.next(node) || node.text.size() != line.size() || node.tag != "module" || node.fields.size() != 4 ||
          node.fields[3].size() % 2 != 0 || !markup::parse_module(node, element, malformed) ||
          element.type != "elf" || element.build_id.empty()) {
        continue;
      }
      const std::string name(element.name), id(node.fields[3]);
      // "[vdso]" and the like are the kernel's, with no file to push.
      if (name.starts_with("[") || analysis::is_system_library(name.substr(name.rfind('/') + 1)) || have.count(id) ||
          !seen.insert(id).second)
        continue;
      if (runs.symbols->find(element.build_id) != nullptr ||
          runs.symbols->find_symbfile(element.build_id, symbfile::Kind::kRanges) != nullptr) {
        have.insert(id);
        continue;
      }
      Module& module = missing[id];
      module.name = name;
      ++module.crashes;
    }
  }
  std::string out = "<h2>Symbols</h2>\n";
  if (missing.empty()) return out + "<p id=\"missing-symbols\">Every module of the crashes has its symbols.</p>\n";
  out += "<p>Modules of the crashes without symbols (their frames show as module+offset). Push them from the build "
         "that made them, with a key whose keys.tsv line grants <code>symbols</code>: <code>sampler-symbols push "
         "--url COLLECTOR --api-key KEY FILE...</code> (the unstripped binaries, or their debug files).</p>\n"
         "<table id=\"missing-symbols\">\n<thead><tr><th>build ID</th><th>module</th><th>crashes</th><th>command"
         "</th></tr></thead>\n<tbody>\n";
  for (const auto& [id, module] : missing) {
    out += "<tr><td><code>" + html_escape(id) + "</code></td><td>" + html_escape(module.name) +
           "</td><td class=\"num\">" + std::to_string(module.crashes) + "</td><td><code>sampler-symbols push --url "
           "COLLECTOR --api-key KEY " + html_escape(module.name) + "</code></td></tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

// The application's page: releases with their charts, the latest runs, the crash groups. The releases' figures
// are the database's counts per release and day (`days`), the crash groups those of the crashes' runs
// (`crashes`: load_app(), crashes only), the latest runs the newest stored (`latest`, oldest first).
std::string app_body(const std::string& app, const std::vector<store::DayCounts>& days, const AppRuns& crashes,
                     const std::vector<store::Run>& latest) {
  const std::string base = app_path(app);
  std::string body = "<h1>" + html_escape(app) + "</h1>\n" + problems_note(crashes.problems);
  // Releases, in the order their first runs were stored.
  struct Release {
    std::string version;
    int64_t first_stored = INT64_MAX, first = INT64_MAX, last = 0;
    uint64_t runs = 0, failing = 0;
    std::map<int64_t, DayBar> bars;
  };
  std::map<std::string_view, Release> by_version;
  uint64_t stored = 0;
  for (const store::DayCounts& d : days) {
    Release& release = by_version[d.version];
    release.version = d.version;
    release.first_stored = std::min(release.first_stored, d.first_stored);
    release.first = std::min(release.first, d.first_received);
    release.last = std::max(release.last, d.last_received);
    release.runs += d.runs;
    release.failing += d.failures;
    release.bars[d.day] = {d.runs, d.failures};
    stored += d.runs;
  }
  std::vector<const Release*> order;
  for (const auto& [version, release] : by_version) order.push_back(&release);
  std::sort(order.begin(), order.end(),
            [](const Release* a, const Release* b) { return a->first_stored < b->first_stored; });
  std::map<std::string_view, size_t> release_index;
  for (size_t r = 0; r < order.size(); ++r) release_index.emplace(order[r]->version, r);
  const size_t releases = order.size();
  body += "<h2>Releases</h2>\n<p>" + std::to_string(stored) + " runs stored. " +
          html_link(base + "predictors/", "Predictors over all releases") + "</p>\n";
  body += "<table id=\"releases\">\n<thead><tr><th>release</th><th>runs</th><th>failing</th><th>failure rate</th>"
          "<th>first run</th><th>last run</th><th>runs and failures per day</th><th></th></tr></thead>\n<tbody>\n";
  for (size_t r = releases; r-- > 0;) {
    const Release& release = *order[r];
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.1f%%",
                  100.0 * static_cast<double>(release.failing) / static_cast<double>(release.runs));
    const std::string& version = release.version;
    body += "<tr><td>" + (version.empty() ? std::string("<em>unknown</em>") : html_escape(version)) +
            "</td><td class=\"num\">" + std::to_string(release.runs) + "</td><td class=\"num\">" +
            std::to_string(release.failing) + "</td><td class=\"num\">" + rate + "</td><td>" + utc(release.first) +
            "</td><td>" + utc(release.last) + "</td><td>" + day_chart(release.bars) + "</td><td>" +
            html_link(base + "release/" + percent_encode(version) + "/", "predictors") + "</td></tr>\n";
  }
  body += "</tbody>\n</table>\n";

  // Crash groups: per group its runs, releases, first and last run, a sample.
  const AppRuns& runs = crashes;
  const std::vector<std::string>& signatures = runs.read().runs.crash_groups;
  const size_t groups = signatures.size();
  std::vector<uint64_t> group_runs(groups);
  std::vector<int64_t> group_first(groups, INT64_MAX), group_last(groups, 0);
  std::vector<size_t> sample(groups);
  std::vector<std::vector<bool>> in_release(groups, std::vector<bool>(releases));
  std::unordered_map<std::string_view, int32_t> group_of_run;  // run id -> crash group, for the latest runs
  for (size_t s = 0; s < runs.stored_count(); ++s) {
    const int32_t g = runs.group_of[s];
    if (g < 0) continue;
    const size_t gi = static_cast<size_t>(g);
    group_of_run.emplace(runs.run(s).run_id, g);
    ++group_runs[gi];
    group_first[gi] = std::min(group_first[gi], runs.run(s).received);
    if (runs.run(s).received >= group_last[gi]) sample[gi] = s;  // the latest run
    group_last[gi] = std::max(group_last[gi], runs.run(s).received);
    // A crash stored after the counts were read may be of a release they do not have yet: not flagged here.
    auto release = release_index.find(runs.run(s).version);
    if (release != release_index.end()) in_release[gi][release->second] = true;
  }
  body += "<h2>Crash groups</h2>\n<p>Crashing runs grouped as <code>sampler-analyze</code> groups them: the signal and "
          "the top " + std::to_string(kCrashFrames) + " frames, by function and source line where symbols were "
          "pushed (sampler-symbols push), else module and offset. <em>New in</em>: absent from the release before; "
          "<em>regressed in</em>: back after a release without it.</p>\n";
  body += "<table id=\"crash-groups\">\n<thead><tr><th>group</th><th>runs</th><th>first run</th><th>last run</th>"
          "<th>releases</th><th>signature and a sample run's stack</th></tr></thead>\n<tbody>\n";
  for (size_t g = 0; g < groups; ++g) {
    std::string flags, seen;
    for (size_t r = 0; r < releases; ++r) {
      if (!in_release[g][r]) continue;
      seen += (seen.empty() ? "" : ", ") + html_escape(order[r]->version);
      bool before = false;
      for (size_t k = 0; k + 1 < r; ++k) before = before || in_release[g][k];
      const bool previous = r > 0 && in_release[g][r - 1];
      if (!previous && !before) {
        flags += "<span class=\"flag new\">new in " + html_escape(order[r]->version) + "</span>";
      } else if (!previous && before) {
        flags += "<span class=\"flag regressed\">regressed in " + html_escape(order[r]->version) + "</span>";
      }
    }
    body += "<tr id=\"group-" + std::to_string(g + 1) + "\"><td class=\"num\">" +
            html_link(base + "group/" + std::to_string(g + 1) + "/", "#" + std::to_string(g + 1)) +
            "</td><td class=\"num\">" + std::to_string(group_runs[g]) + "</td><td>" + utc(group_first[g]) +
            "</td><td>" + utc(group_last[g]) + "</td><td>" + seen + "</td><td>" + flags + " <code class=\"signature\">" +
            html_escape(signatures[g]) + "</code>" + sample_stack(runs, sample[g]) + "</td></tr>\n";
  }
  body += "</tbody>\n</table>\n";

  body += missing_symbols(runs);

  // The latest runs, newest first.
  body += "<h2>Latest runs</h2>\n<table id=\"latest-runs\">\n<thead><tr><th>received (UTC)</th><th>run</th>"
          "<th>release</th><th>outcome</th><th>crash group</th></tr></thead>\n<tbody>\n";
  for (size_t s = latest.size(); s-- > 0;) {
    const store::Run& run = latest[s];
    auto group = group_of_run.find(run.run_id);
    const int32_t g = group == group_of_run.end() ? -1 : group->second;
    body += "<tr><td>" + utc(run.received) + "</td><td><code>" + html_escape(run.run_id) + "</code></td><td>" +
            html_escape(run.version) + "</td><td>" + html_escape(outcome_text(run)) + "</td><td>" +
            (g < 0 ? std::string() : html_link("#group-" + std::to_string(g + 1), "#" + std::to_string(g + 1))) +
            "</td></tr>\n";
  }
  body += "</tbody>\n</table>\n";
  return body;
}

}  // namespace

// Where a reader that keeps what it read of the store may stop asking for it again (store.h, ReadPosition): the
// reads not yet known to have seen every row up to the highest id (or sequence number) they saw, and the id up to
// which every read from now on sees every row. A read settles the earlier ones with a position taken before it
// began, so that what it reads up to `seen_up_to` is whole.
struct Settling {
  static constexpr size_t kPending = 16;  // the newest reads kept pending (an older one settles no later)
  int64_t seen_up_to = 0;
  std::vector<std::pair<int64_t, store::ReadPosition>> pending;

  // Settles what `before` (a position taken before the next read) shows every transaction behind has ended.
  void settle(const store::ReadPosition& before) {
    std::erase_if(pending, [&](const std::pair<int64_t, store::ReadPosition>& read) {
      if (!before.sees_all_before(read.second)) return false;
      seen_up_to = std::max(seen_up_to, read.first);
      return true;
    });
  }
  // A read at `position` saw rows up to `highest`.
  void read(int64_t highest, const store::ReadPosition& position) {
    if (highest > seen_up_to) pending.emplace_back(highest, position);
    if (pending.size() > kPending) pending.erase(pending.begin());
  }
  // Takes the store's position before a read and settles with it (nothing pending: nothing asked).
  bool before_read(store::Store& store, std::string& error) {
    store::ReadPosition now;
    if (pending.empty()) return true;
    if (!store.position(now, error)) return false;
    settle(now);
    return true;
  }
};

// An application's counts as the database keeps them (store.h, Store::changed_counts(): rows summed at ingest,
// each with the sequence number of its last write), kept between predictor pages: each page asks the database
// only for the rows changed since the last settled one, and sums the rows (docs/decisions.md, "The database's
// counts kept between pages").
struct KeptCounts {
  using Key = std::tuple<std::string, std::string, bool, std::string, int32_t>;
  std::map<Key, store::CountsRow> rows;
  int64_t after = 0;  // every row last written with a sequence number up to this one is in `rows` as it stands
  Settling settling;

  bool update(store::Store& store, const std::string& app, std::string& error) {
    if (!settling.before_read(store, error)) return false;
    const int64_t settled = settling.seen_up_to;
    std::vector<store::CountsRow> changed;
    store::ReadPosition position;
    if (!store.changed_counts(app, after, changed, &position, error)) return false;
    int64_t highest = 0;
    for (store::CountsRow& row : changed) {
      highest = std::max(highest, row.sequence);
      Key key{row.version, row.crash_signature, row.failed, row.key, row.shard};
      rows[std::move(key)] = std::move(row);  // a later state of the row, committed: it replaces the kept one
    }
    settling.read(highest, position);
    after = std::max(after, settled);
    return true;
  }
  std::vector<store::SectionTotals> sum(const store::CountsQuery& query) const {
    std::vector<const store::CountsRow*> all;
    all.reserve(rows.size());
    for (const auto& entry : rows) all.push_back(&entry.second);
    return store::sum_rows(all, query);
  }
  size_t memory() const {
    size_t bytes = 0;
    for (const auto& [key, row] : rows) {
      bytes += sizeof key + sizeof row + 2 * (row.version.capacity() + row.crash_signature.capacity()) +
               2 * row.key.capacity() + 8 * (row.sites.capacity() + row.predicates.capacity()) + 64;
    }
    return bytes;
  }
};

// An application's runs per release and day as the database counts them (store.h, Store::count_days()), kept
// between its application pages: the counts of the runs that are over (final, or interim for longer than
// store::kGoingSeconds) with ids up to a settled one; each page asks the database only for the runs stored after
// it and those that were still going (docs/decisions.md, "The database's counts kept between pages").
struct KeptDays {
  using Days = std::map<std::pair<std::string, int64_t>, store::DayCounts>;
  Days days;          // by release and day
  int64_t after = 0;  // the runs with ids up to this one are in `days`, but for those of `going`
  std::vector<int64_t> going;
  Settling settling;

  static void add(Days& into, const store::DayCounts& d) {
    auto [it, inserted] = into.try_emplace({d.version, d.day}, d);
    store::DayCounts& sum = it->second;
    if (inserted) {
      sum.going = 0;
      return;
    }
    sum.first_stored = std::min(sum.first_stored, d.first_stored);
    sum.last_stored = std::max(sum.last_stored, d.last_stored);
    sum.runs += d.runs;
    sum.failures += d.failures;
    sum.first_received = std::min(sum.first_received, d.first_received);
    sum.last_received = std::max(sum.last_received, d.last_received);
  }
  // The application's counts now, one per release and day, into `shown`.
  bool count(store::Store& store, const std::string& app, std::vector<store::DayCounts>& shown, std::string& error) {
    if (!settling.before_read(store, error)) return false;
    store::ReadPosition position;
    store::DaysQuery query{app, after, going, settling.seen_up_to};
    query.position = &position;
    std::vector<store::DayCounts> counted;
    if (!store.count_days(query, counted, error)) return false;
    Days all = days;
    std::vector<int64_t> still_going;
    int64_t highest = 0;
    for (const store::DayCounts& d : counted) {
      highest = std::max(highest, d.last_stored);
      add(all, d);
      if (!d.settled) continue;  // counted again by the next page
      if (d.going != 0) {
        still_going.push_back(d.going);
      } else {
        add(days, d);
      }
    }
    going = std::move(still_going);
    after = std::max(after, query.settled);
    settling.read(highest, position);
    for (auto& entry : all) shown.push_back(std::move(entry.second));
    return true;
  }
};

namespace {

// The first round's counts of `subset`'s runs as the store summed them for `query` (PostgreSQL: store.h,
// Store::changed_counts(), KeptCounts), with the catalogue's ids. False when the store keeps none, or when they are
// not the subset's: their runs are not the subset's runs (a run stored or counted after the page read the runs,
// one whose summary gives no counts), or a section key does not read. Each section is taken or left out by the
// checks read_runs() applies to a summary's section (analysis/src/runs.cpp, add_summary_section()), on its key.
bool store_counts(const KeptCounts* kept, const store::CountsQuery& query, const AppRuns& runs,
                  const analysis::RunSet& subset, analysis::RunCounts& counts) {
  if (kept == nullptr) return false;
  const std::vector<store::SectionTotals> totals = kept->sum(query);
  const analysis::Catalogue& catalogue = runs.read().catalogue;
  struct Entry {
    size_t first_site = 0, site_count = 0;
  };
  std::map<std::pair<std::string_view, std::string_view>, Entry> entries;  // (unit, scheme) -> its sites
  for (size_t i = 0; i < catalogue.sites.size(); ++i) {
    Entry& entry = entries[{catalogue.sites[i].unit, catalogue.sites[i].scheme}];
    if (entry.site_count == 0) entry.first_site = i;
    ++entry.site_count;
  }
  counts.f.assign(catalogue.predicate_site.size(), 0);
  counts.s.assign(catalogue.predicate_site.size(), 0);
  counts.f_observed.assign(catalogue.sites.size(), 0);
  counts.s_observed.assign(catalogue.sites.size(), 0);
  counts.num_failing = counts.num_succeeding = 0;
  for (const store::SectionTotals& t : totals) {
    if (t.key.empty()) {
      (t.failed ? counts.num_failing : counts.num_succeeding) += t.runs;
      continue;
    }
    SectionShape shape;
    if (!parse_section_key(t.key, shape)) return false;
    auto found = entries.find({shape.unit, shape.scheme});
    if (found == entries.end()) continue;  // no site information, or no run's section was taken
    const Entry& entry = found->second;
    const analysis::Site& first = catalogue.sites[entry.first_site];
    const bool malformed = (shape.state & 2) != 0, complete = (shape.state & 1) != 0;
    if ((malformed && shape.malformed_index < entry.site_count) || shape.lines > entry.site_count ||
        (complete && shape.lines != entry.site_count) || shape.counters == 0 || shape.counters != first.counters)
      continue;
    std::vector<uint64_t>& observed = t.failed ? counts.f_observed : counts.s_observed;
    std::vector<uint64_t>& truths = t.failed ? counts.f : counts.s;
    for (size_t line = 0; line < t.sites.size() && line < entry.site_count; ++line) {
      observed[entry.first_site + line] += t.sites[line];
    }
    const size_t per_site = first.predicates;
    for (size_t id = 0; per_site > 0 && id < t.predicates.size() && id / per_site < entry.site_count; ++id) {
      truths[catalogue.sites[entry.first_site + id / per_site].first_predicate + id % per_site] += t.predicates[id];
    }
  }
  uint64_t failing = 0;
  for (uint8_t f : subset.failed) failing += f;
  return counts.num_failing == failing && counts.num_succeeding == subset.size() - failing;
}

// The predictor sections over the runs `keep` selects (by read run), ranked as sampler-analyze ranks them and
// shown by its renderer; the first round's counts are the store's (`query`) where it keeps them and they are the
// runs' (store_counts()).
template <class Keep>
std::string predictors_body(const KeptCounts* kept, const store::CountsQuery* query, const std::string& app,
                            const AppRuns& runs, std::string_view heading, Keep keep) {
  // Unfinished runs (their last report interim) are not read (read_stored()), as sampler-analyze --database
  // leaves them out.
  analysis::RunSet subset;
  subset.crash_groups = runs.read().runs.crash_groups;
  for (size_t r = 0; r < runs.read().runs.size(); ++r) {
    if (keep(r)) subset.add_from(runs.read().runs, r, runs.read().runs.crash_group[r]);
  }
  analysis::RankOptions options;
  analysis::RunCounts counted;
  const bool in_store = query != nullptr && store_counts(kept, *query, runs, subset, counted);
  const analysis::Ranking ranking = analysis::rank(subset, runs.read().catalogue.predicate_site,
                                                   runs.read().catalogue.sites.size(), options,
                                                   in_store ? &counted : nullptr);
  const analysis::Analysis analysis{&runs.read().catalogue, &subset, &ranking, options, runs.read().left_out};
  std::string body = "<h1>" + html_link(app_path(app), html_escape(app)) + ": bug predictors, " + std::string(heading) +
                     "</h1>\n" + problems_note(runs.problems);
  if (!runs.have_sites) {
    body += "<p class=\"error\">No site information for this application: the collector finds it under "
            "<code>--site-dir DIR</code> as <code>DIR/" + html_escape(app) + "/</code> (*.sites files or the "
            "instrumented binaries).</p>\n";
  }
  body += analysis::html_predictors(analysis, SIZE_MAX, "");
  if (in_store) {
    body += "<p class=\"note\" id=\"counted-by-store\">The ranking's counts were summed by the database.</p>\n";
  }
  return body;
}

// What an application's site information is read from: its files, sizes and times ("" when there is none).
std::string site_dir_stamp(const std::string& site_dir, const std::string& app) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path path = fs::path(site_dir) / app;
  if (site_dir.empty() || !fs::exists(path, ec)) return "";
  std::vector<std::string> files;
  auto add = [&files](const fs::path& file) {
    std::error_code ignored;
    files.push_back(file.string() + " " + std::to_string(fs::file_size(file, ignored)) + " " +
                    std::to_string(fs::last_write_time(file, ignored).time_since_epoch().count()));
  };
  if (fs::is_directory(path, ec)) {
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code type_error;
      if (it->is_regular_file(type_error)) add(it->path());
    }
    if (ec) files.push_back("? " + ec.message());  // never equal to a stamp that listed the directory
  } else {
    add(path);
  }
  std::sort(files.begin(), files.end());
  std::string stamp = "+";
  for (const std::string& file : files) stamp += file + "\n";
  return stamp;
}

}  // namespace

// What the console keeps of one application's runs between its predictor pages (docs/decisions.md, "The
// console", "The runs kept between pages"): each page reads only the runs stored after the last one kept.
struct KeptApp {
  std::mutex making;  // held by the page that reads, extends and uses `runs`
  std::unique_ptr<AppRuns> runs = std::make_unique<AppRuns>();  // between pages, the settled runs only
  bool opened = false;
  std::string sites_stamp, symbols_stamp;  // what `runs` were read with
  int64_t last_id = 0;     // the store's id of the last run kept
  std::vector<int64_t> going;  // the kept runs still going (not read): each page asks whether they have ended
  Settling settling;     // where the reads stand that may still be missing a run committed late
  KeptCounts counts;  // the database's counts (held by `making` too)
  std::mutex counting;  // held by the application page that counts with `days`
  KeptDays days;
  size_t bytes = 0;   // runs.memory() after the last page (under Console::Kept::mutex)
  size_t counts_bytes = 0;  // counts.memory() after the last page (under Console::Kept::mutex)
  uint64_t used = 0;  // Console::Kept::clock at the last page (under Console::Kept::mutex)
};

// Brings `app`'s kept runs up to date for a page: the runs stored since the last kept are read; those every later
// read sees are kept, and `settled` marks where they end (the others are this page's only: truncate() to it).
static bool extend_kept(store::Store& store, const std::string& site_dir, const std::string& app, KeptApp& kept,
                        AppRuns::Mark& settled, std::string& error) {
  const std::string sites_stamp = site_dir_stamp(site_dir, app);
  std::string symbols_stamp;
  if (!store.symbols_stamp(app, symbols_stamp, error)) return false;
  if (!kept.opened || sites_stamp != kept.sites_stamp || symbols_stamp != kept.symbols_stamp) {
    // Site information or symbols changed (or nothing is kept yet): the runs are read again, all of them.
    kept.runs = std::make_unique<AppRuns>();
    open_app(store, app, site_dir, *kept.runs);
    kept.sites_stamp = sites_stamp;
    kept.symbols_stamp = symbols_stamp;
    kept.last_id = 0;
    kept.going.clear();
    kept.settling = Settling();
    kept.opened = true;
  }
  AppRuns& runs = *kept.runs;
  if (!kept.settling.before_read(store, error)) return false;
  const size_t from = runs.stored_count();
  store::ReadPosition position;
  store::Query query{app, std::nullopt, false, /*stored_bodies=*/true, /*summaries=*/true};
  query.after = kept.last_id;
  query.also = kept.going;
  query.position = &position;
  bool ended = false;  // a kept run that was going has its final report: it is read where it stands, among all
  // A run silent for longer than store::kGoingSeconds is over (the store replaces its report no more): no page
  // asks for it again, so abandoned runs cost the pages nothing (with the slack of a clock behind a writer's).
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto over = [now](const store::Run& run) { return !store::going(run.received, now, store::kClockSlack); };
  std::set<int64_t> quiet;  // runs going that are over
  const bool fetched = store.for_each(query, [&](const store::Run& run) {
    if (run.stored_id > kept.last_id) {
      runs.add(run);
    } else if (!run.interim_sequence) {
      ended = true;
    } else if (over(run)) {
      quiet.insert(run.stored_id);
    }
    return true;
  }, error);
  std::erase_if(kept.going, [&quiet](int64_t id) { return quiet.count(id) > 0; });
  if (!fetched || ended) {
    kept.opened = false;
    return fetched && extend_kept(store, site_dir, app, kept, settled, error);
  }
  // The runs up to the highest id an earlier read saw are all seen once every transaction that may still have
  // held one has ended (store.h, ReadPosition; Settling, with a position taken before this read); on SQLite at
  // once. This read's own runs are kept at once too when the store now shows every transaction that may have held
  // a lower id ended, and as many runs stored after the last kept up to its highest as it read: it missed none
  // (else the next page reads them again).
  if (runs.stored_count() > from) {
    const int64_t highest = runs.stored_id.back();
    store::ReadPosition after_read;
    int64_t stored = -1;
    std::string ignored;
    const bool whole = position.reader == 0 ||
                       (store.position(after_read, ignored) && after_read.sees_all_before(position) &&
                        store.count_between(app, kept.last_id, highest, stored, ignored) &&
                        stored == static_cast<int64_t>(runs.stored_count() - from));
    if (whole) {
      kept.settling.seen_up_to = std::max(kept.settling.seen_up_to, highest);
    } else {
      kept.settling.read(highest, position);
    }
  }
  // Kept: the runs seen by every later read; those still going among them are not read (read_stored()), and
  // asked for again by each page until their final report comes (an interim report replaces the last in place).
  size_t keep = from;
  for (; keep < runs.stored_count() && runs.stored_id[keep] <= kept.settling.seen_up_to; ++keep) {
    if (runs.interim[keep] && !over(runs.run(keep))) kept.going.push_back(runs.stored_id[keep]);
  }
  read_stored(store, app, /*crashes_only=*/false, from, keep, runs);
  runs.drop_stored(keep);  // read: their columns are all a page needs of them from now on
  if (keep > from) kept.last_id = runs.stored_id[keep - 1];
  settled = runs.mark();
  read_stored(store, app, /*crashes_only=*/false, keep, runs.stored_count(), runs);  // this page's only
  return true;
}

// Every application's KeptApp, within a budget of memory.
struct Console::Kept {
  using App = KeptApp;
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<App>> apps;
  uint64_t clock = 0;
  size_t budget = kDefaultKeptBytes;
  uint64_t dropped = 0;  // applications dropped to stay within the budget

  std::shared_ptr<App> find(const std::string& app) {
    std::lock_guard lock(mutex);
    std::shared_ptr<App>& kept = apps[app];
    if (!kept) kept = std::make_shared<App>();
    return kept;
  }

  // Keeps `kept`'s runs if they fit in the budget, with the applications used last (the others are dropped).
  void account(App& kept) {
    const size_t bytes = kept.runs->memory(), counts_bytes = kept.counts.memory();
    std::lock_guard lock(mutex);
    kept.bytes = bytes;
    kept.counts_bytes = counts_bytes;
    kept.used = ++clock;
    for (;;) {
      size_t total = 0, counts_total = 0;
      std::map<std::string, std::shared_ptr<App>>::iterator oldest = apps.end();
      for (auto it = apps.begin(); it != apps.end(); ++it) {
        total += it->second->bytes;
        counts_total += it->second->counts_bytes;
        const bool holds = it->second->bytes + it->second->counts_bytes > 0;  // not only the application page's
        if (holds && (oldest == apps.end() || it->second->used < oldest->second->used)) oldest = it;
      }
      if ((total <= budget && counts_total <= budget) || oldest == apps.end()) break;
      apps.erase(oldest);  // a page making with it still holds it; its memory goes when that page ends
      ++dropped;
    }
  }

  void drop(const std::string& app, const std::shared_ptr<App>& kept) {
    std::lock_guard lock(mutex);
    if (auto it = apps.find(app); it != apps.end() && it->second == kept) apps.erase(it);
  }
};

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_digit_value(text[i + 1]) >= 0 &&
        hex_digit_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit_value(text[i + 1]) * 16 + hex_digit_value(text[i + 2]));
      i += 2;
    } else {
      out += plus_is_space && text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

std::optional<std::vector<store::SectionCounts>> summary_counts(std::string_view summary) {
  bool have_samples = false;
  std::optional<std::string_view> backtrace;
  std::vector<store::SectionCounts> counts(1);  // the run itself first (an empty key)
  std::set<std::pair<std::string_view, std::string_view>> units;
  bool twice = false;
  const bool read = analysis::read_summary(summary, have_samples, backtrace, [&](const analysis::SummarySection& s) {
    twice = twice || !units.emplace(s.unit, s.scheme).second;
    store::SectionCounts& section = counts.emplace_back();
    section.key = section_key(s);
    analysis::id_list::for_each(s.sites, [&section](uint32_t id) { section.sites.push_back(id); });
    analysis::id_list::for_each(s.predicates, [&section](uint32_t id) { section.predicates.push_back(id); });
  });
  if (!read || twice) return std::nullopt;
  if (!have_samples) counts.clear();  // not ranked: read_runs() leaves such a run out
  return counts;
}

std::string presented_key(const Request& request) {
  constexpr std::string_view kScheme = "APIKey ";
  if (request.authorization.starts_with(kScheme)) return std::string(request.authorization.substr(kScheme.size()));
  std::string_view cookies = request.cookie;
  while (!cookies.empty()) {
    std::string_view pair = cookies.substr(0, cookies.find(';'));
    cookies.remove_prefix(std::min(cookies.size(), pair.size() + 1));
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const size_t equals = pair.find('=');
    if (equals != std::string_view::npos && pair.substr(0, equals) == Console::kCookie) {
      return percent_decode(pair.substr(equals + 1));
    }
  }
  return "";
}

Console::Console(store::Store& store, const KeyTable& keys, std::string site_dir)
    : store_(store), keys_(keys), site_dir_(std::move(site_dir)), kept_(std::make_unique<Kept>()) {
  // The one script is named by its hash: no other script runs, whatever a page holds (analysis/html.h).
  unsigned char digest[32];
  unsigned int size = 0;
  EVP_Digest(analysis::kSortScript.data(), analysis::kSortScript.size(), digest, &size, EVP_sha256(), nullptr);
  unsigned char base64[64];
  EVP_EncodeBlock(base64, digest, static_cast<int>(size));
  content_security_policy_ = "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
                             std::string(reinterpret_cast<char*>(base64)) +
                             "'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
}

Console::~Console() = default;

void Console::set_kept_bytes(size_t bytes) {
  std::lock_guard lock(kept_->mutex);
  kept_->budget = bytes;
}

Console::KeptStats Console::kept_stats() const {
  std::lock_guard lock(kept_->mutex);
  KeptStats stats;
  for (const auto& [app, kept] : kept_->apps) {
    stats.bytes += kept->bytes;
    stats.counts_bytes += kept->counts_bytes;
    stats.apps += kept->bytes > 0;
  }
  stats.dropped = kept_->dropped;
  return stats;
}

std::vector<std::string> Console::readable(std::string_view key, bool& known) const {
  std::vector<KeyTable::Holder> lines = keys_.holders(key);
  known = !lines.empty();
  std::set<std::string> apps;
  for (const KeyTable::Holder& line : lines) {
    if (line.read) apps.insert(line.app);
  }
  return {apps.begin(), apps.end()};
}

Response Console::page(int status, std::string_view title, std::string_view body, bool signed_in,
                       std::string_view made_note) const {
  Response response;
  response.status = status;
  response.content_type = "text/html; charset=utf-8";
  response.headers = {{"Content-Security-Policy", content_security_policy_},
                      {"Cache-Control", "no-store"},
                      {"X-Content-Type-Options", "nosniff"},
                      {"Referrer-Policy", "no-referrer"}};
  std::string nav = "<nav><a href=\"/ui/\">Applications</a>";
  if (signed_in) nav += "<form method=\"post\" action=\"/ui/logout\"><button type=\"submit\">Sign out</button></form>";
  nav += "</nav>\n";
  response.body = analysis::html_page(std::string(title) + " \u2014 sampler console",
                                      nav + std::string(made_note) + std::string(body));
  return response;
}

Response Console::login_page(int status, std::string_view message) const {
  std::string body = "<h1>sampler console</h1>\n";
  if (!message.empty()) body += "<p class=\"error\" id=\"login-error\">" + html_escape(message) + "</p>\n";
  body += "<form id=\"login\" method=\"post\" action=\"/ui/login\"><p><label>API key with <code>read</code> "
          "permission (keys.tsv) <input type=\"password\" name=\"key\" autocomplete=\"current-password\" "
          "required></label> <button type=\"submit\">Sign in</button></p></form>\n<p>Scripts may send "
          "<code>Authorization: APIKey KEY</code> instead.</p>\n";
  return page(status, "Sign in", body, false);
}

Response Console::login(const Request& request) {
  if (request.method != "POST") return login_page(200, "");
  if (request.body_too_large || request.body.size() > kMaxLoginBody) return login_page(413, "the form is too large");
  std::string key;
  std::string_view fields = request.body;
  while (!fields.empty()) {
    std::string_view field = fields.substr(0, fields.find('&'));
    fields.remove_prefix(std::min(fields.size(), field.size() + 1));
    if (field.starts_with("key=")) key = percent_decode(field.substr(4), true);
  }
  bool known = false;
  std::vector<std::string> apps = key.empty() ? std::vector<std::string>() : readable(key, known);
  if (!known) return login_page(401, "unknown API key");
  if (apps.empty()) return login_page(403, "this API key may not read (keys.tsv: read)");
  Response response = page(303, "Signed in", "<p><a href=\"/ui/\">Continue</a></p>", true);
  response.headers.push_back({"Location", "/ui/"});
  // HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it; Path: only the console gets it.
  response.headers.push_back({"Set-Cookie", std::string(kCookie) + "=" + percent_encode(key) +
                                                "; Path=/ui/; HttpOnly; SameSite=Strict; Max-Age=43200" +
                                                (request.secure ? "; Secure" : "")});
  return response;
}

Response Console::handle(const Request& request) {
  if (request.path == "/ui/login") return login(request);
  if (request.path == "/ui/logout" && request.method == "POST") {
    Response response = page(303, "Signed out", "<p><a href=\"/ui/login\">Sign in</a></p>", false);
    response.headers.push_back({"Location", "/ui/login"});
    response.headers.push_back({"Set-Cookie", std::string(kCookie) + "=; Path=/ui/; HttpOnly; SameSite=Strict; "
                                              "Max-Age=0" + (request.secure ? "; Secure" : "")});
    return response;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    Response response = page(405, "Not allowed", "<p>The console is read-only: GET only.</p>", false);
    response.headers.push_back({"Allow", "GET, HEAD"});
    return response;
  }
  const std::string key = presented_key(request);
  bool known = false;
  const std::vector<std::string> apps = key.empty() ? std::vector<std::string>() : readable(key, known);
  if (!known) return login_page(401, key.empty() ? "" : "unknown API key");
  if (apps.empty()) {
    return page(403, "Not allowed", "<h1>Not allowed</h1>\n<p>This API key may not read: its keys.tsv line needs "
                                    "<code>read</code>.</p>\n", false);
  }
  if (request.path == "/ui") {
    Response response = page(303, "Applications", "<p><a href=\"/ui/\">Applications</a></p>", true);
    response.headers.push_back({"Location", "/ui/"});
    return response;
  }
  auto not_found = [this] { return page(404, "Not found", "<h1>Not found</h1>\n<p>No such page.</p>\n", true); };
  if (request.path == "/ui/") {
    std::string body = "<h1>Applications</h1>\n<ul id=\"applications\">\n";
    for (const std::string& app : apps) body += "<li>" + html_link(app_path(app), html_escape(app)) + "</li>\n";
    return page(200, "Applications", body + "</ul>\n", true);
  }
  constexpr std::string_view kApp = "/ui/app/";
  if (!request.path.starts_with(kApp)) return not_found();
  // The application is one the key reads, found by prefix (a name may hold any character, '/' too); the
  // longest name that fits wins. Another application's page is "not found", as if it did not exist.
  const std::string_view rest = request.path.substr(kApp.size());
  const std::string* app = nullptr;
  for (const std::string& name : apps) {
    if (rest.size() > name.size() && rest.starts_with(name) && rest[name.size()] == '/' &&
        (app == nullptr || name.size() > app->size()))
      app = &name;
  }
  if (app == nullptr) {
    for (const std::string& name : apps) {
      if (rest == name) {
        Response response = page(303, name, "", true);
        response.headers.push_back({"Location", app_path(name)});
        return response;
      }
    }
    return not_found();
  }
  const std::string_view tail = rest.substr(app->size() + 1);
  // A page made within the window is served again: what readers cost the store is one making of a page per
  // window (serve --console-fresh-ms; docs/decisions.md, "The console"). The access was checked above.
  const double window = fresh_.window();
  if (window <= 0) return app_page(*app, tail, {});
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const std::string path(request.path);
  if (std::optional<Response> kept = fresh_.find(path, *app, now)) return std::move(*kept);
  const uint64_t generation = fresh_.generation(*app);  // before the making reads the store
  Response response = app_page(*app, tail, made_line(window));
  if (response.status == 200) fresh_.keep(path, *app, generation, now, response);
  return response;
}

Response Console::app_page(const std::string& app, std::string_view tail, std::string_view made_note) {
  AppRuns runs;
  std::string error;
  auto unavailable = [this, &error] {
    Response response = page(503, "Storage unavailable", "<h1>Storage unavailable</h1>\n<p>The store did not "
                                                         "answer; try again.</p>\n", true);
    response.log = "console: the store failed: " + json_string(error);
    return response;
  };
  if (tail.empty()) {
    // The application's page reads the crashes' runs, then counts the rest in the database (after the crashes:
    // their releases are among the counts) and reads the newest runs (docs/decisions.md, "The console").
    std::vector<store::DayCounts> days;
    std::vector<store::Run> latest;
    store::Query newest{app};
    newest.newest = kLatestRuns;
    newest.bodies = false;  // the listing shows the columns alone
    std::shared_ptr<KeptApp> kept = kept_->find(app);
    std::unique_lock counting(kept->counting);
    if (!load_app(store_, app, site_dir_, /*crashes_only=*/true, runs, error) ||
        !kept->days.count(store_, app, days, error) ||
        !store_.for_each(newest, [&latest](const store::Run& run) {
          latest.push_back(run);
          return true;
        }, error)) {
      kept->days = KeptDays();  // what a failed count left is not kept
      return unavailable();
    }
    return page(200, app, app_body(app, days, runs, latest), true, made_note);
  }
  // The predictor pages need every run's lists: those the console kept since the last page, and the runs stored
  // since, read now (extend_kept()).
  std::shared_ptr<KeptApp> kept = kept_->find(app);
  std::unique_lock making(kept->making);
  AppRuns::Mark settled;
  if (!extend_kept(store_, site_dir_, app, *kept, settled, error)) {
    kept_->drop(app, kept);
    return unavailable();
  }
  // The first round's counts: the database's, as it kept them at ingest, where it keeps them; else (or when they
  // cannot be read) the page counts its runs itself.
  const bool counts = store_.keeps_counts() && kept->counts.update(store_, app, error);
  if (store_.keeps_counts() && !counts) kept->counts = KeptCounts();
  const size_t problems = kept->runs->problems.items.size();
  Response response = predictor_page(app, tail, *kept->runs, counts ? &kept->counts : nullptr, made_note);
  // A problem found in this page's own runs may be one named only once (a symbol file's): kept, it would be lost.
  if (problems > settled.problems) {
    kept_->drop(app, kept);
    kept->opened = false;
    return response;
  }
  kept->runs->truncate(settled);
  kept_->account(*kept);
  return response;
}

Response Console::predictor_page(const std::string& app, std::string_view tail, const AppRuns& runs,
                                 const KeptCounts* counts, std::string_view made_note) {
  auto not_found = [this] { return page(404, "Not found", "<h1>Not found</h1>\n<p>No such page.</p>\n", true); };
  if (tail == "predictors/") {
    const store::CountsQuery query{app};
    return page(200, app + ": predictors",
                predictors_body(counts, &query, app, runs, "all releases", [](size_t) { return true; }), true,
                made_note);
  }
  if (tail.starts_with("release/") && tail.ends_with("/")) {
    const std::string version(tail.substr(8, tail.size() - 9));
    if (std::find(runs.releases.begin(), runs.releases.end(), version) == runs.releases.end()) return not_found();
    const store::CountsQuery query{app, version};
    return page(200, app + " " + version + ": predictors",
                predictors_body(counts, &query, app, runs, "release " + html_escape(version),
                                [&](size_t r) {
                                  return runs.releases[runs.release_of[runs.stored_of[r]]] == version;
                                }),
                true, made_note);
  }
  if (tail.starts_with("group/") && tail.ends_with("/")) {
    const std::string number(tail.substr(6, tail.size() - 7));
    char* end = nullptr;
    const unsigned long group = std::strtoul(number.c_str(), &end, 10);
    if (number.empty() || *end != '\0' || group == 0 || group > runs.read().runs.crash_groups.size()) {
      return not_found();
    }
    const int32_t g = static_cast<int32_t>(group - 1);
    // The store's counts of the group are those of its runs' crash signatures (as the collector hashed the stack
    // at upload), when no such signature is also another group's (or no group's) run's: symbols pushed since
    // name frames that the hash told apart, never the other way round; else the page counts the runs itself.
    std::map<std::string_view, std::set<int32_t>> groups_of;
    for (size_t s = 0; s < runs.stored_count(); ++s) {
      const std::string& signature = runs.signatures[runs.signature_of[s]];
      if (!signature.empty()) groups_of[signature].insert(runs.group_of[s]);
    }
    store::CountsQuery query{app, std::nullopt, std::vector<std::string>()};
    bool shared = false;
    for (const auto& [signature, groups] : groups_of) {
      if (groups.count(g) == 0) continue;
      query.failing_signatures->emplace_back(signature);
      shared = shared || groups.size() > 1;
    }
    // The group's failing runs against the successful ones (the other failures left out).
    return page(200, app + ": crash group #" + number,
                predictors_body(counts, shared ? nullptr : &query, app, runs,
                                "crash group #" + number + " <code>" +
                                    html_escape(runs.read().runs.crash_groups[static_cast<size_t>(g)]) +
                                    "</code> against the successful runs",
                                [&](size_t r) {
                                  return runs.read().runs.crash_group[r] == g || runs.read().runs.failed[r] == 0;
                                }),
                true, made_note);
  }
  return not_found();
}

}  // namespace sampler::collector
