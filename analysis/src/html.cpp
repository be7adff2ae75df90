// The HTML page (analysis/output.h): one template, the data filled in as HTML (so the page reads without
// JavaScript); each sortable cell carries its sort key in data-value for the small script that sorts by column.
// No external scripts, styles, fonts or images: the page works from a file:// URL on a machine without network.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "analysis/html.h"
#include "analysis/output.h"
#include "text.h"

namespace sampler::analysis {

namespace {

// The page shell (html_page): @TITLE@ and @BODY@ are filled by fill(); everything else is sent as it is. The
// one stylesheet of sampler-analyze's page and of the collector's console.
constexpr std::string_view kShell = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
th { background: #f3f3f3; white-space: nowrap; }
th.sortable { cursor: pointer; } th.sortable::after { content: " \2195"; color: #999; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .predicate { font-family: ui-monospace, monospace; }
.where { color: #555; font-size: 0.9em; }
.source { color: #333; background: #f6f6f6; font-family: ui-monospace, monospace; white-space: pre-wrap; }
.thermometer { display: flex; height: 14px; border: 1px solid #555; background: #fff; min-width: 4px; }
.thermometer span { display: block; height: 100%; }
.context { background: #000; } .low { background: #d00; } .interval { background: #f6a0a8; }
.legend span.swatch { display: inline-block; width: 1.2em; height: 0.9em; border: 1px solid #555;
  vertical-align: middle; margin: 0 0.3em 0 1em; }
.chosen td { background: #fff8e6; }
nav { margin-bottom: 1em; } nav a, nav form { margin-right: 1em; } nav form { display: inline; }
.flag { display: inline-block; padding: 0 0.4em; border-radius: 3px; font-size: 0.85em; margin-right: 0.3em; }
.flag.new { background: #fde2e2; color: #900; } .flag.regressed { background: #fff0c2; color: #7a5a00; }
.stack { margin: 0.3em 0 0 1.2em; padding: 0; font-family: ui-monospace, monospace; font-size: 0.9em; }
svg.chart { border-bottom: 1px solid #999; } svg.chart .runs { fill: #9db7d5; } svg.chart .failures { fill: #d00; }
.error { color: #900; }
</style>
</head>
<body>
@BODY@
<script>@SCRIPT@</script>
</body>
</html>
)html";

// The predictor sections (html_predictors), placeholders filled by fill().
constexpr std::string_view kPredictorSections = R"html(<p id="summary">@SUMMARY@</p>
<p class="legend">Each thermometer: length by the log of the runs where the predicate was observed true;
<span class="swatch context"></span>Context
<span class="swatch low"></span>lower bound of Increase
<span class="swatch interval"></span>its 95% confidence interval
<span class="swatch"></span>successful runs (of those where it was true).
Rows of the elimination rounds are highlighted. docs/analysis.md explains the scores.</p>

<h2>Predictors</h2>
<table id="predictors">
<thead><tr>@HEADER@</tr></thead>
<tbody>
@ROWS@</tbody>
</table>

<h2>Elimination rounds</h2>
<p>Each round takes the top predictor, then discards every run where it was observed true and ranks again on
the rest.</p>
<ol id="rounds">
@ROUNDS@</ol>

<h2>Crash groups</h2>
<p>Crashing runs grouped by the signal and the top frames of their stacks: function (source file:line) where symbols
are known (--symbols, or the symbols pushed to the collector), else module and module-relative address.</p>
<table id="crashes">
<thead><tr><th>group</th><th>runs</th><th>signature</th></tr></thead>
<tbody>
@CRASHES@</tbody>
</table>
)html";

}  // namespace

// The page's one script: sorting the predictor table by a column (the page reads the same without it).
const std::string_view kSortScript = R"js(
// Sorting by column: click a header (numbers compare as numbers). The page reads the same without it.
document.querySelectorAll("#predictors th.sortable").forEach(function (th, column) {
  var descending = false;
  th.addEventListener("click", function () {
    var body = document.querySelector("#predictors tbody");
    var rows = Array.prototype.slice.call(body.rows);
    var index = th.cellIndex;
    descending = !descending;
    rows.sort(function (a, b) {
      var x = a.cells[index].getAttribute("data-value"), y = b.cells[index].getAttribute("data-value");
      var nx = parseFloat(x), ny = parseFloat(y);
      var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : (x < y ? -1 : x > y ? 1 : 0);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
)js";

namespace {


// One pass over the template, so that input text that happens to look like a placeholder stays text.
std::string fill(std::string_view page, const std::map<std::string_view, std::string>& values) {
  std::string out;
  for (size_t at = 0; at < page.size();) {
    size_t open = page.find('@', at);
    size_t close = open == std::string_view::npos ? open : page.find('@', open + 1);
    auto found = close == std::string_view::npos ? values.end() : values.find(page.substr(open + 1, close - open - 1));
    if (found == values.end()) {
      size_t end = open == std::string_view::npos ? page.size() : open + 1;
      out.append(page.substr(at, end - at));
      at = end;
      continue;
    }
    out.append(page.substr(at, open - at));
    out += found->second;
    at = close + 1;
  }
  return out;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", std::clamp(fraction, 0.0, 1.0) * 100);
  return text;
}

// The paper's bug thermometer (section 4): Context, the lower bound of Increase, the rest of Increase up to its
// estimate (the interval's lower half), and the successful runs, as fractions of the runs where P was true.
std::string thermometer(const RankedPredicate& p, uint64_t most_true) {
  uint64_t runs_true = p.counts.f + p.counts.s;
  double length = most_true <= 1 ? 1.0 : std::log1p(static_cast<double>(runs_true)) /
                                             std::log1p(static_cast<double>(most_true));
  double low = std::max(0.0, p.increase_low);
  double interval = std::max(0.0, p.increase - low);
  std::string title = "Context " + format_number(p.context) + ", Increase " + format_number(p.increase) +
                      " (at least " + format_number(p.increase_low) + "), true in " + std::to_string(p.counts.f) +
                      " failing and " + std::to_string(p.counts.s) + " successful runs";
  return "<div class=\"thermometer\" style=\"width:" + percent(length) + "\" title=\"" + html_escape(title) +
         "\"><span class=\"context\" style=\"width:" + percent(p.context) + "\"></span><span class=\"low\" style=\"" +
         "width:" + percent(low) + "\"></span><span class=\"interval\" style=\"width:" + percent(interval) +
         "\"></span></div>";
}

// Source lines of the sites' files, read once each.
// The source lines the page shows, read only from regular files under the --source-dir directory: a site's file
// name comes from the binary, which anyone may have built, so it must not make the page show /etc/passwd. A
// relative name is looked up under DIR, an absolute one as if DIR were its root (DIR/usr/src/...), the way a
// debugger's sysroot works; neither may leave DIR, through ".." or a link.
class SourceLines {
 public:
  explicit SourceLines(const std::string& directory) {
    std::error_code ec;
    if (!directory.empty()) root_ = std::filesystem::canonical(directory, ec);
  }
  std::string line(const std::string& file, const std::string& number) {
    if (root_.empty() || file.empty()) return "";
    auto [it, added] = files_.try_emplace(file);
    if (added) read(file, it->second);
    char* end = nullptr;
    unsigned long n = std::strtoul(number.c_str(), &end, 10);
    if (n == 0 || n > it->second.size()) return "";
    std::string text = it->second[n - 1];
    text.erase(0, text.find_first_not_of(" \t"));
    return text;
  }

 private:
  static constexpr uintmax_t kMaxSourceBytes = 64u << 20;

  void read(const std::string& file, std::vector<std::string>& lines) const {
    std::filesystem::path name = std::filesystem::path(file).lexically_normal();
    for (const auto& part : name)
      if (part == "..") return;
    // An absolute name already under DIR is taken as it is.
    std::filesystem::path path = name.is_absolute() ? inside_root(name) : std::filesystem::path();
    if (path.empty()) path = inside_root(root_ / name.relative_path());
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(path, ec) ||
        std::filesystem::file_size(path, ec) > kMaxSourceBytes)
      return;
    std::ifstream in(path);
    for (std::string text; std::getline(in, text);) lines.push_back(text);
  }

  // `path` with its links resolved, or empty when that is not under the root.
  std::filesystem::path inside_root(const std::filesystem::path& path) const {
    std::error_code ec;
    std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
    if (ec) return {};
    auto [inside, rest] = std::mismatch(root_.begin(), root_.end(), resolved.begin(), resolved.end());
    return inside == root_.end() ? resolved : std::filesystem::path();
  }

  std::filesystem::path root_;
  std::map<std::string, std::vector<std::string>> files_;
};

std::string cell(const std::string& value, const std::string& sort_key, const char* css = nullptr) {
  return std::string("<td") + (css ? std::string(" class=\"") + css + "\"" : "") + " data-value=\"" +
         html_escape(sort_key) + "\">" + value + "</td>";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : escape_field(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_page(std::string_view title, std::string_view body) {
  return fill(kShell, {{"TITLE", html_escape(title)}, {"BODY", std::string(body)}, {"SCRIPT", std::string(kSortScript)}});
}

std::string format_html(const Analysis& analysis, size_t top, const std::string& source_dir) {
  std::string title = std::to_string(analysis.runs->size()) + " runs, " + std::to_string(analysis.ranking->num_failing) +
                      " failing";
  return html_page("sampler-analyze: " + title,
                   "<h1>Bug predictors: " + html_escape(title) + "</h1>\n" + html_predictors(analysis, top, source_dir));
}

std::string html_predictors(const Analysis& analysis, size_t top, const std::string& source_dir) {
  const Ranking& ranking = *analysis.ranking;
  const Catalogue& catalogue = *analysis.catalogue;
  std::string summary = std::to_string(analysis.runs->size()) + " runs read (" +
                        std::to_string(ranking.num_failing) + " failing, " +
                        std::to_string(ranking.num_succeeding) + " successful";
  if (analysis.left_out > 0) summary += ", " + std::to_string(analysis.left_out) + " reports left out";
  summary += "); " + std::to_string(ranking.first.size()) + " predicates predict failure (Increase &gt; 0 at 95% " +
             "confidence), ranked by " + std::string(metric_name(analysis.options.metric)) + "; " +
             std::to_string(ranking.rounds.size()) + " elimination rounds explain " +
             std::to_string(ranking.num_failing - ranking.failing_unexplained) + " of the failing runs.";

  std::string header;
  const char* columns[] = {"rank", "round", "thermometer", nullptr, "increase", "failure", "context",
                           "F", "S", "predicate", "where"};
  for (const char* name : columns) {
    std::string label = name ? name : std::string(metric_name(analysis.options.metric));
    header += "<th class=\"sortable\">" + html_escape(label) + "</th>";
  }

  std::vector<Row> rows = table_rows(analysis, top);
  uint64_t most_true = 1;
  for (const Row& row : rows) most_true = std::max(most_true, row.predicate->counts.f + row.predicate->counts.s);
  SourceLines sources(source_dir);
  std::string body;
  size_t rank = 0;
  for (const Row& row : rows) {
    const RankedPredicate& p = *row.predicate;
    const Site& site = catalogue.sites[catalogue.predicate_site[p.predicate]];
    std::string text = predicate_text(site, p.predicate - site.first_predicate);
    std::string where = site.file + ":" + site.line + " " + site.function + "()";
    std::string source = sources.line(site.file, site.line);
    ++rank;
    body += row.round ? "<tr class=\"chosen\">" : "<tr>";
    body += cell(std::to_string(rank), std::to_string(rank), "num");
    body += cell(row.round ? std::to_string(row.round) : "", row.round ? std::to_string(row.round) : "999999999",
                 "num");
    body += cell(thermometer(p, most_true), std::to_string(p.counts.f + p.counts.s));
    for (double value : {p.score, p.increase, p.failure, p.context}) {
      body += cell(format_number(value), format_number(value), "num");
    }
    body += cell(std::to_string(p.counts.f), std::to_string(p.counts.f), "num");
    body += cell(std::to_string(p.counts.s), std::to_string(p.counts.s), "num");
    body += cell("<span class=\"predicate\">" + html_escape(text) + "</span>" +
                     (source.empty() ? "" : "<div class=\"source\">" + html_escape(source) + "</div>"),
                 text);
    body += cell("<span class=\"where\">" + html_escape(where) + " &middot; " + html_escape(site.scheme) + "</span>",
                 where);
    body += "</tr>\n";
  }

  std::string rounds;
  for (size_t i = 0; i < ranking.rounds.size(); ++i) {
    const Round& round = ranking.rounds[i];
    const Site& site = catalogue.sites[catalogue.predicate_site[round.top.predicate]];
    rounds += "<li><span class=\"predicate\">" +
              html_escape(predicate_text(site, round.top.predicate - site.first_predicate)) + "</span> <span " +
              "class=\"where\">" + html_escape(site.file + ":" + site.line + " " + site.function + "()") +
              "</span>: explains " + std::to_string(round.failing_discarded) + " of the " +
              std::to_string(round.top.num_failing) + " failing runs left (and was true in " +
              std::to_string(round.succeeding_discarded) + " successful runs)";
    if (!round.crash_groups.empty()) {
      rounds += "; crash groups:";
      for (const auto& [group, count] : round.crash_groups) {
        rounds += " <a href=\"#group-" + std::to_string(group + 1) + "\">#" + std::to_string(group + 1) + "</a> (" +
                  std::to_string(count) + ")";
      }
    }
    rounds += "</li>\n";
  }
  if (ranking.failing_unexplained > 0) {
    rounds += "<li class=\"unexplained\">" + std::to_string(ranking.failing_unexplained) +
              " failing runs left that no predicate predicts</li>\n";
  }

  std::vector<uint64_t> sizes(analysis.runs->crash_groups.size(), 0);
  for (int32_t group : analysis.runs->crash_group) {
    if (group >= 0) ++sizes[static_cast<size_t>(group)];
  }
  std::string crashes;
  for (size_t g = 0; g < sizes.size(); ++g) {
    crashes += "<tr id=\"group-" + std::to_string(g + 1) + "\"><td class=\"num\">#" + std::to_string(g + 1) +
               "</td><td class=\"num\">" + std::to_string(sizes[g]) + "</td><td><code>" +
               html_escape(analysis.runs->crash_groups[g]) + "</code></td></tr>\n";
  }

  return fill(kPredictorSections, {{"SUMMARY", summary}, {"HEADER", header}, {"ROWS", body}, {"ROUNDS", rounds},
                                   {"CRASHES", crashes}});
}

}  // namespace sampler::analysis
