// Writing and merging analysis indexes (analysis/index.h).
#include "analysis/index.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>

#include "sections/line_reader.h"
#include "text.h"

namespace sampler::analysis {

namespace {

constexpr std::string_view kMagic = "sampler-index 1";

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t tab = line.find('\t', start);
    parts.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) return parts;
    start = tab + 1;
  }
}

void append_deltas(std::string& out, const std::vector<uint32_t>& ids) {
  uint32_t previous = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i] - previous);
    previous = ids[i];
  }
}

// Parses "3,1,10" back into 3, 4, 14; false on anything else (or ids not below `limit`).
bool parse_deltas(std::string_view text, uint32_t limit, std::vector<uint32_t>& ids) {
  ids.clear();
  if (text.empty()) return true;
  uint64_t value = 0;
  for (size_t start = 0; start <= text.size();) {
    size_t comma = text.find(',', start);
    std::string_view piece = text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                                 : comma - start);
    uint64_t delta = 0;
    auto [end, error] = std::from_chars(piece.data(), piece.data() + piece.size(), delta);
    if (error != std::errc() || end != piece.data() + piece.size() || piece.empty()) return false;
    if (!ids.empty() && delta == 0) return false;  // sorted, no duplicates
    value += delta;
    if (value >= limit) return false;
    ids.push_back(static_cast<uint32_t>(value));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return true;
}

bool parse_number(std::string_view text, uint64_t& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

// Tabs and line ends would break the line structure: names and signatures are written with control characters
// escaped (escape_control), so they come back as their escaped text.
std::string field(std::string_view text) { return escape_field(text); }

}  // namespace

bool write_index(const std::string& path, const Catalogue& catalogue, const RunSet& runs, DiagnosticSink& sink) {
  gzFile file = gzopen(path.c_str(), "wb6");
  if (file == nullptr) {
    sink.error(path, 0, std::string("cannot create the index: ") + std::strerror(errno));
    return false;
  }
  std::string out = std::string(kMagic) + "\n";
  bool ok = true;
  auto flush = [&](bool force) {
    if (!ok || (!force && out.size() < (1u << 20))) return;
    if (!out.empty() && gzwrite(file, out.data(), static_cast<unsigned>(out.size())) != static_cast<int>(out.size())) {
      ok = false;
    }
    out.clear();
  };
  const std::vector<Site>& sites = catalogue.sites;
  size_t section = 0;
  for (size_t s = 0; s < sites.size();) {
    size_t end = s + 1;
    while (end < sites.size() && sites[end].unit == sites[s].unit && sites[end].scheme == sites[s].scheme) ++end;
    out += "section\t" + std::to_string(section++) + "\t" + sites[s].unit + "\t" + field(sites[s].scheme) + "\t" +
           std::to_string(sites[s].counters) + "\t" + std::to_string(end - s) + "\t" + field(sites[s].sites_file) +
           "\n";
    for (; s < end; ++s) {
      out += "site\t" + field(sites[s].file) + "\t" + field(sites[s].line) + "\t" + field(sites[s].function) + "\t" +
             field(sites[s].node);
      for (const std::string& f : sites[s].fields) out += "\t" + field(f);
      out += "\n";
    }
    flush(false);
  }
  for (size_t g = 0; g < runs.crash_groups.size(); ++g) {
    out += "crash\t" + std::to_string(g) + "\t" + field(runs.crash_groups[g]) + "\n";
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    out += std::string("run\t") + (runs.failed[r] ? "failure" : "success") + "\t" + (runs.crashed[r] ? "crash" : "-") +
           "\t" + (runs.crash_group[r] >= 0 ? std::to_string(runs.crash_group[r]) : "-") + "\t";
    append_deltas(out, runs.sites(r));
    out += "\t";
    append_deltas(out, runs.predicates(r));
    out += "\t" + field(runs.names[r]) + "\n";
    flush(false);
  }
  flush(true);
  if (gzclose(file) != Z_OK) ok = false;
  if (!ok) sink.error(path, 0, "cannot write the index");
  return ok;
}

bool read_indexes(const std::vector<std::string>& paths, Catalogue& catalogue, RunSet& runs, DiagnosticSink& sink) {
  bool ok = true;
  // Merged sections by (unit, scheme): first site, site count, counters.
  struct Merged {
    uint32_t first_site, site_count, counters;
  };
  std::map<std::pair<std::string, std::string>, Merged> sections;
  std::map<std::string, int32_t> groups;
  for (size_t g = 0; g < runs.crash_groups.size(); ++g) groups.emplace(runs.crash_groups[g], static_cast<int32_t>(g));

  for (const std::string& path : paths) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      sink.error(path, 0, std::string("cannot open: ") + std::strerror(errno));
      ok = false;
      continue;
    }
    LineReader reader(fd, path, sink);
    auto bad = [&](std::string message) {
      sink.error(path, reader.line_number(), std::move(message));
      ok = false;
    };
    // This index's site and predicate ids -> merged ids (UINT32_MAX: a section left out).
    std::vector<uint32_t> site_map, predicate_map;
    std::vector<int32_t> group_map;
    size_t pending_sites = 0;   // site lines still expected for the current section
    Site pending;               // the current section's common part
    bool new_section = false;   // its sites are new to the catalogue
    uint32_t next_site = 0;     // merged id of the next site line (existing sections)
    std::vector<uint32_t> site_ids, predicate_ids, mapped_sites, mapped_predicates;
    bool first = true;
    for (std::string_view line; reader.next(line);) {
      if (first) {
        first = false;
        if (line != kMagic) {
          bad("not a sampler index (it does not begin with '" + std::string(kMagic) + "')");
          break;
        }
        continue;
      }
      std::vector<std::string_view> parts = split_tabs(line);
      if (pending_sites > 0) {
        if (parts[0] != "site" || parts.size() < 5) {
          bad("expected a site line");
          pending_sites = 0;
          continue;
        }
        --pending_sites;
        if (!new_section) {
          uint32_t merged = next_site == UINT32_MAX ? UINT32_MAX : next_site++;
          site_map.push_back(merged);
          for (uint32_t p = 0; p < pending.predicates; ++p) {
            predicate_map.push_back(merged == UINT32_MAX ? UINT32_MAX : catalogue.sites[merged].first_predicate + p);
          }
          continue;
        }
        Site site = pending;
        site.file = parts[1];
        site.line = parts[2];
        site.function = parts[3];
        site.node = parts[4];
        for (size_t i = 5; i < parts.size(); ++i) site.fields.emplace_back(parts[i]);
        site.first_predicate = static_cast<uint32_t>(catalogue.predicate_site.size());
        site_map.push_back(static_cast<uint32_t>(catalogue.sites.size()));
        for (uint32_t p = 0; p < site.predicates; ++p) {
          predicate_map.push_back(site.first_predicate + p);
          catalogue.predicate_site.push_back(static_cast<uint32_t>(catalogue.sites.size()));
        }
        catalogue.sites.push_back(std::move(site));
        continue;
      }
      if (parts[0] == "section" && parts.size() == 7) {
        uint64_t counters = 0, count = 0;
        if (!parse_number(parts[4], counters) || !parse_number(parts[5], count) || counters > kMaxCounters ||
            count > UINT32_MAX) {
          bad("malformed section line");
          continue;
        }
        pending = Site();
        pending.unit = parts[2];
        pending.scheme = parts[3];
        pending.sites_file = parts[6];
        pending.kind = scheme_kind(pending.scheme);
        pending.counters = static_cast<uint32_t>(counters);
        pending.predicates = predicate_count(pending.kind, pending.counters);
        pending_sites = count;
        auto key = std::make_pair(pending.unit, pending.scheme);
        auto found = sections.find(key);
        new_section = found == sections.end();
        if (new_section) {
          sections.emplace(key, Merged{static_cast<uint32_t>(catalogue.sites.size()), static_cast<uint32_t>(count),
                                       pending.counters});
        } else if (found->second.site_count != count || found->second.counters != counters) {
          bad("unit " + pending.unit + ", scheme '" + pending.scheme + "' has other sites in an earlier index: its " +
              "samples are left out");
          next_site = UINT32_MAX;
        } else {
          next_site = found->second.first_site;
        }
        continue;
      }
      if (parts[0] == "crash" && parts.size() == 3) {
        uint64_t id = 0;
        if (!parse_number(parts[1], id) || id != group_map.size()) {
          bad("malformed crash line");
          continue;
        }
        auto [it, added] = groups.emplace(std::string(parts[2]), static_cast<int32_t>(runs.crash_groups.size()));
        if (added) runs.crash_groups.emplace_back(parts[2]);
        group_map.push_back(it->second);
        continue;
      }
      if (parts[0] == "run" && parts.size() == 7) {
        uint64_t group = 0;
        bool group_ok = parts[3] == "-" || (parse_number(parts[3], group) && group < group_map.size());
        if ((parts[1] != "failure" && parts[1] != "success") || (parts[2] != "crash" && parts[2] != "-") ||
            !group_ok || !parse_deltas(parts[4], static_cast<uint32_t>(site_map.size()), site_ids)) {
          bad("malformed run line");
          continue;
        }
        if (!parse_deltas(parts[5], static_cast<uint32_t>(predicate_map.size()), predicate_ids)) {
          bad("malformed run line");
          continue;
        }
        mapped_sites.clear();
        mapped_predicates.clear();
        for (uint32_t s : site_ids) {
          if (site_map[s] != UINT32_MAX) mapped_sites.push_back(site_map[s]);
        }
        for (uint32_t p : predicate_ids) {
          if (predicate_map[p] != UINT32_MAX) mapped_predicates.push_back(predicate_map[p]);
        }
        std::sort(mapped_sites.begin(), mapped_sites.end());
        std::sort(mapped_predicates.begin(), mapped_predicates.end());
        runs.add(std::string(parts[6]), parts[1] == "failure", parts[2] == "crash",
                 parts[3] == "-" ? -1 : group_map[group], mapped_sites, mapped_predicates);
        continue;
      }
      bad("malformed line");
    }
    if (first) bad("empty file: not a sampler index");
    if (reader.failed()) ok = false;
    ::close(fd);
  }
  return ok;
}

}  // namespace sampler::analysis
