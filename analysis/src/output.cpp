// The ranked table as TSV and JSON (analysis/output.h). The HTML page is in html.cpp.
#include "analysis/output.h"

#include <algorithm>
#include <cstdio>

#include "text.h"

namespace sampler::analysis {

std::vector<Row> table_rows(const Analysis& analysis, size_t top) {
  std::vector<Row> rows;
  const Ranking& ranking = *analysis.ranking;
  std::vector<uint8_t> chosen;
  for (size_t i = 0; i < ranking.rounds.size() && rows.size() < top; ++i) {
    rows.push_back({&ranking.rounds[i].top, i + 1});
  }
  for (const Round& round : ranking.rounds) {
    if (chosen.size() <= round.top.predicate) chosen.resize(round.top.predicate + 1, 0);
    chosen[round.top.predicate] = 1;
  }
  auto is_chosen = [&chosen](const RankedPredicate& p) { return p.predicate < chosen.size() && chosen[p.predicate]; };
  for (const RankedPredicate& p : ranking.first) {
    if (rows.size() >= top) break;
    if (!is_chosen(p)) rows.push_back({&p, 0});
  }
  if (!analysis.options.all_predicates) return rows;
  // Then every predicate whose statistics over all runs the rows above do not give: those that did not pass the
  // test, and the predictors of round 2 on, whose rows above are over their rounds' runs (round 1 ranks all runs).
  std::vector<const RankedPredicate*> more;
  for (const RankedPredicate& p : ranking.first) {
    if (is_chosen(p) && p.predicate != ranking.rounds[0].top.predicate) more.push_back(&p);
  }
  for (const RankedPredicate& p : ranking.unranked) more.push_back(&p);
  std::sort(more.begin(), more.end(), [](const RankedPredicate* a, const RankedPredicate* b) {
    return ranks_before(*a, *b);
  });
  for (size_t i = 0; i < more.size() && rows.size() < top; ++i) rows.push_back({more[i], 0});
  return rows;
}

std::string describe_predicate(const Catalogue& catalogue, uint32_t id) {
  const Site& site = catalogue.sites[catalogue.predicate_site[id]];
  return site.file + ":" + site.line + " " + site.function + "(): " + predicate_text(site, id - site.first_predicate);
}

std::string format_tsv(const Analysis& analysis, size_t top) {
  std::string out = "rank\tround\t" + std::string(metric_name(analysis.options.metric)) +
                    "\tincrease\tincrease_low\tfailure\tcontext\timportance\tF\tS\tF_obs\tS_obs\tfile\tline\t"
                    "function\tscheme\tpredicate\n";
  size_t rank = 0;
  for (const Row& row : table_rows(analysis, top)) {
    const RankedPredicate& p = *row.predicate;
    const Site& site = analysis.catalogue->sites[analysis.catalogue->predicate_site[p.predicate]];
    out += std::to_string(++rank) + "\t" + (row.round ? std::to_string(row.round) : "-") + "\t";
    for (double value : {p.score, p.increase, p.increase_low, p.failure, p.context, p.importance}) {
      out += format_number(value) + "\t";
    }
    for (uint64_t count : {p.counts.f, p.counts.s, p.counts.f_observed, p.counts.s_observed}) {
      out += std::to_string(count) + "\t";
    }
    for (const std::string* field : {&site.file, &site.line, &site.function, &site.scheme}) {
      out += escape_field(*field) + "\t";
    }
    out += escape_field(predicate_text(site, p.predicate - site.first_predicate)) + "\n";
  }
  return out;
}

namespace {

void json_predicate(std::string& out, const Analysis& analysis, const RankedPredicate& p) {
  const Site& site = analysis.catalogue->sites[analysis.catalogue->predicate_site[p.predicate]];
  out += "{\"predicate\": " + json_string(predicate_text(site, p.predicate - site.first_predicate));
  out += ", \"file\": " + json_string(site.file) + ", \"line\": " + json_string(site.line);
  out += ", \"function\": " + json_string(site.function) + ", \"scheme\": " + json_string(site.scheme);
  out += ", \"unit\": " + json_string(site.unit) + ", \"sites_file\": " + json_string(site.sites_file);
  out += ", \"score\": " + format_number(p.score) + ", \"importance\": " + format_number(p.importance);
  out += ", \"increase\": " + format_number(p.increase) + ", \"increase_low\": " + format_number(p.increase_low);
  out += ", \"failure\": " + format_number(p.failure) + ", \"context\": " + format_number(p.context);
  out += ", \"F\": " + std::to_string(p.counts.f) + ", \"S\": " + std::to_string(p.counts.s);
  out += ", \"F_obs\": " + std::to_string(p.counts.f_observed) +
         ", \"S_obs\": " + std::to_string(p.counts.s_observed);
  out += ", \"num_failing\": " + std::to_string(p.num_failing) +
         ", \"num_succeeding\": " + std::to_string(p.num_succeeding) + "}";
}

}  // namespace

std::string format_json(const Analysis& analysis, size_t top) {
  const Ranking& ranking = *analysis.ranking;
  std::string out = "{\"runs\": " + std::to_string(analysis.runs->size());
  out += ", \"failing\": " + std::to_string(ranking.num_failing);
  out += ", \"succeeding\": " + std::to_string(ranking.num_succeeding);
  out += ", \"left_out\": " + std::to_string(analysis.left_out);
  out += ", \"metric\": " + json_string(metric_name(analysis.options.metric));
  out += ",\n \"predictors\": [";
  size_t rank = 0;
  for (const Row& row : table_rows(analysis, top)) {
    out += rank == 0 ? "\n  " : ",\n  ";
    out += "{\"rank\": " + std::to_string(++rank) + ", \"round\": " + std::to_string(row.round) + ", \"scores\": ";
    json_predicate(out, analysis, *row.predicate);
    out += "}";
  }
  out += "],\n \"rounds\": [";
  for (size_t i = 0; i < ranking.rounds.size(); ++i) {
    const Round& round = ranking.rounds[i];
    out += i == 0 ? "\n  " : ",\n  ";
    out += "{\"round\": " + std::to_string(i + 1) + ", \"failing_explained\": " +
           std::to_string(round.failing_discarded) +
           ", \"succeeding_discarded\": " + std::to_string(round.succeeding_discarded) + ", \"crash_groups\": [";
    for (size_t g = 0; g < round.crash_groups.size(); ++g) {
      out += (g ? ", " : "") + std::string("{\"group\": ") + std::to_string(round.crash_groups[g].first + 1) +
             ", \"runs\": " + std::to_string(round.crash_groups[g].second) + "}";
    }
    out += "], \"predictor\": ";
    json_predicate(out, analysis, round.top);
    out += "}";
  }
  out += "],\n \"failing_unexplained\": " + std::to_string(ranking.failing_unexplained);
  out += ",\n \"crash_groups\": [";
  std::vector<uint64_t> sizes(analysis.runs->crash_groups.size(), 0);
  for (int32_t group : analysis.runs->crash_group) {
    if (group >= 0) ++sizes[static_cast<size_t>(group)];
  }
  for (size_t g = 0; g < sizes.size(); ++g) {
    out += g == 0 ? "\n  " : ",\n  ";
    out += "{\"group\": " + std::to_string(g + 1) + ", \"runs\": " + std::to_string(sizes[g]) +
           ", \"signature\": " + json_string(analysis.runs->crash_groups[g]) + "}";
  }
  out += "]}\n";
  return out;
}

}  // namespace sampler::analysis
