// Sampling plans learned from reports (analysis/plan.h).
#include "analysis/plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "analysis/predicates.h"
#include "collector/outcome.h"
#include "sections/core/plan.h"
#include "sections/line_reader.h"
#include "sections/lines.h"
#include "sections/report.h"
#include "sections/site_info.h"

namespace sampler::analysis {

namespace {

// Samples / probability of a site in one run: its executions, unbiased (each execution is sampled with that
// probability, independently: docs/analysis.md "Sampling plans").
double estimated_executions(uint64_t samples, double probability) {
  return static_cast<double>(samples) / probability;
}

bool parse_positive(std::string_view text, double& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(value) && value > 0;
}

// One run's samples sections as read: counter sums per site, until the run's rates are known (the `plan` and
// `outcome` subreports come after the samples).
struct RunSections {
  struct Section {
    size_t usage_index;
    std::vector<uint64_t> samples;
  };
  std::vector<Section> sections;
};

// Reads one report: its samples sections summed per site (into `run`, sections numbered in `usage`), its
// outcome and plan subreports.
class UsageReader : public ReportVisitor, public SamplesVisitor {
 public:
  UsageReader(const std::string& name, Usage& usage, std::map<std::pair<std::string, std::string>, size_t>& index,
              DiagnosticSink& sink)
      : name_(name), usage_(usage), index_(index), sink_(sink) {}

  // ReportVisitor: the subreports other than samples.
  void begin_subreport(std::string_view id, uint64_t line) override {
    mode_ = id == "outcome" ? Mode::kOutcome : id == "plan" ? Mode::kPlan : Mode::kOther;
    body_.clear();
    body_line_ = line + 1;
    if (mode_ == Mode::kPlan) {
      plan_seen = true;
      plan_line = line;
    }
  }
  void body_line(std::string_view line, uint64_t) override {
    if (mode_ == Mode::kOther) return;
    body_.append(line);
    body_.push_back('\n');
  }
  void end_subreport(bool) override {
    if (mode_ == Mode::kOutcome) {
      collector::Outcome parsed;
      std::string error;
      if (collector::parse_outcome(body_, body_line_, parsed, error)) {
        outcome = std::move(parsed);
      } else {
        // "line N: what": the line goes where diagnostics put it.
        uint64_t line = 0;
        if (error.starts_with("line ")) {
          auto [end, ec] = std::from_chars(error.data() + 5, error.data() + error.size(), line);
          if (ec == std::errc() && std::string_view(end).starts_with(": ")) error.erase(0, end + 2 - error.data());
        }
        fail(line, "outcome subreport: " + error);
      }
    } else if (mode_ == Mode::kPlan) {
      std::string_view rest = body_;
      for (uint64_t number = body_line_; !rest.empty(); ++number) {
        std::string_view line = text::take_line(rest);
        size_t tab = line.find('\t');
        std::string_view key = line.substr(0, tab), value = tab == line.npos ? "" : line.substr(tab + 1);
        if (key == "id") {
          plan_id = value;
        } else if (key == "sparsity") {
          plan_sparsity = value;
        }
      }
    }
    mode_ = Mode::kOther;
  }

  // SamplesVisitor: each samples section's lines summed per site.
  void begin_section(const SampleSectionHeader& header) override {
    section_ = nullptr;
    if (header.kind != SampleSectionKind::kSamples) return;
    const SchemeInfo* scheme = find_scheme(header.scheme);
    if (scheme != nullptr && scheme->is_bounds) return;  // a minimum and a maximum, not counts
    auto [it, added] = index_.emplace(std::pair(std::string(header.unit), std::string(header.scheme)),
                                      usage_.sections.size());
    if (added) usage_.sections.push_back({std::string(header.unit), std::string(header.scheme), {}});
    section_line_ = header.line;
    for (RunSections::Section& section : run.sections) {
      if (section.usage_index == it->second) section_ = &section;  // repeated sections are summed
    }
    if (section_ == nullptr) section_ = &run.sections.emplace_back(RunSections::Section{it->second, {}});
    lines_ = 0;
  }
  void section_line(std::string_view line, uint64_t number) override {
    if (section_ == nullptr) return;
    uint64_t sum = 0;
    while (true) {
      size_t tab = line.find('\t');
      std::string_view field = line.substr(0, tab);
      uint64_t value = 0;
      auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
      if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
        fail(number, "malformed samples line (counters are decimal numbers separated by tabs)");
        section_ = nullptr;
        return;
      }
      sum = sum + value < sum ? UINT64_MAX : sum + value;
      if (tab == line.npos) break;
      line.remove_prefix(tab + 1);
    }
    if (lines_ == section_->samples.size()) section_->samples.push_back(0);
    uint64_t& total = section_->samples[lines_++];
    total = total + sum < total ? UINT64_MAX : total + sum;
  }
  void end_section(bool) override {
    if (section_ == nullptr) return;
    // The first run taken in sets a section's sites (a run left out sets nothing).
    const std::vector<SiteUsage>& sites = usage_.sections[section_->usage_index].sites;
    const size_t expected = sites.empty() ? section_->samples.size() : sites.size();
    if (lines_ != expected || section_->samples.size() != lines_) {
      fail(section_line_, "unit " + usage_.sections[section_->usage_index].unit + ", scheme '" +
                              usage_.sections[section_->usage_index].scheme + "': " + std::to_string(lines_) +
                              " samples lines, but " + std::to_string(expected) + " in the runs before");
    }
    section_ = nullptr;
  }

  void fail(uint64_t line, std::string message) {
    sink_.error(name_, line, std::move(message) + "; the run is left out");
    failed = true;
  }

  RunSections run;
  std::optional<collector::Outcome> outcome;
  bool plan_seen = false;
  uint64_t plan_line = 0;
  std::string plan_id, plan_sparsity;
  bool failed = false;

 private:
  enum class Mode { kOther, kOutcome, kPlan };
  const std::string& name_;
  Usage& usage_;
  std::map<std::pair<std::string, std::string>, size_t>& index_;
  DiagnosticSink& sink_;
  Mode mode_ = Mode::kOther;
  std::string body_;
  uint64_t body_line_ = 0;
  RunSections::Section* section_ = nullptr;
  uint64_t section_line_ = 0;
  uint64_t lines_ = 0;
};

}  // namespace

double program_seconds(double measured_seconds, uint64_t samples, double sample_seconds, bool& floored) {
  const double own = measured_seconds - static_cast<double>(samples) * sample_seconds;
  const double floor = (1 - kSampledShareCeiling) * measured_seconds;
  floored = own < floor;
  return floored ? floor : own;
}

bool read_plan_file(const std::string& path, KnownPlan& known, DiagnosticSink& sink) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    sink.error(path, 0, std::string("cannot open: ") + std::strerror(errno));
    return false;
  }
  known = KnownPlan{};
  known.file = path;
  plan::Reader reader;
  std::string line;
  while (std::getline(in, line)) {
    plan::Line parsed = reader.next(line);
    const char* error = parsed.error;
    if (parsed.kind == plan::LineKind::id) known.id = parsed.id;
    if (parsed.kind == plan::LineKind::entry &&
        !known.probabilities
             .emplace(PlanKey{std::string(parsed.unit), std::string(parsed.scheme), parsed.site}, parsed.probability)
             .second) {
      error = "the same unit, scheme and site twice";
    }
    if (parsed.kind == plan::LineKind::malformed || error != nullptr) {
      sink.error(path, reader.line_number(), std::string(error) + ": the plan is unusable");
      return false;
    }
  }
  if (in.bad()) {
    sink.error(path, reader.line_number(), "cannot read");
    return false;
  }
  if (const char* error = reader.finish()) {
    sink.error(path, std::max<uint64_t>(reader.line_number(), 1), std::string(error) + ": the plan is unusable");
    return false;
  }
  return true;
}

Usage read_usage(const std::vector<std::string>& files, const UsageOptions& options, DiagnosticSink& sink) {
  Usage usage;
  std::map<std::pair<std::string, std::string>, size_t> index;
  if (options.progress != nullptr) options.progress->set_total(files.size());
  for (const std::string& name : files) {
    CappedSink capped(sink);
    UsageReader reader(name, usage, index, capped);
    int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      sink.error(name, 0, std::string("cannot open: ") + std::strerror(errno) + "; left out");
      ++usage.left_out;
      continue;
    }
    {
      LineReader input(fd, name, capped);
      read_report(input, reader, reader);
      if (input.failed()) reader.failed = true;
    }
    struct stat status {};
    const uint64_t bytes = ::fstat(fd, &status) == 0 ? static_cast<uint64_t>(status.st_size) : 0;
    ::close(fd);
    if (options.progress != nullptr) options.progress->add(1, bytes);
    auto leave_out = [&](std::string why) {
      sink.warning(name, 0, "left out: " + why);
      ++usage.left_out;
    };
    if (reader.failed) {
      ++usage.left_out;  // the error was named
      continue;
    }
    if (reader.run.sections.empty()) {
      leave_out("no samples");
      continue;
    }
    // The run's rates: its plan's (an entry, else its uniform rate), else its outcome's uniform rate, else
    // --sparsity's.
    const KnownPlan* plan = nullptr;
    std::string sparsity_text;
    if (reader.plan_seen) {
      if (options.plans != nullptr) {
        for (const KnownPlan& known : *options.plans) {
          if (known.id == reader.plan_id) plan = &known;
        }
      }
      if (plan == nullptr) {
        leave_out("it used plan '" + escape_field(reader.plan_id) + "', which no --given-plan names");
        continue;
      }
      sparsity_text = reader.plan_sparsity;
    } else if (reader.outcome) {
      sparsity_text = reader.outcome->sparsity;
      if (sparsity_text.empty()) {
        leave_out("its outcome says sampling was off");
        continue;
      }
    }
    double uniform = 0;  // the rate of the sites no plan names (0: none)
    if (!sparsity_text.empty()) {
      double sparsity = 0;
      if (!parse_positive(sparsity_text, sparsity) || sparsity < 1) {
        leave_out("its sparsity '" + escape_field(sparsity_text) + "' is not a number of at least 1");
        continue;
      }
      uniform = 1 / sparsity;
    } else if (!reader.plan_seen) {
      if (!options.sparsity) {
        leave_out("its rate is unknown (no outcome subreport: give --sparsity N)");
        continue;
      }
      uniform = 1 / *options.sparsity;
    }
    double seconds = 0;
    bool measured = false;  // the run's own CPU time, its samples included
    if (reader.outcome) {
      seconds = reader.outcome->cpu_seconds;
      measured = true;
    } else if (options.run_seconds) {
      seconds = *options.run_seconds;
    } else {
      leave_out("its length is unknown (no outcome subreport: give --run-seconds S)");
      continue;
    }
    if (!(seconds > 0)) {
      leave_out("its outcome's cpu-seconds is 0: too short to measure a cost against");
      continue;
    }
    // A measured length without the run's own samples: the budget is a share of the program's time, not of the
    // sampled run's (--run-seconds is the program's already).
    usage.measured_seconds += seconds;
    if (measured) {
      uint64_t run_samples = 0;
      for (const RunSections::Section& section : reader.run.sections) {
        for (uint64_t samples : section.samples) {
          run_samples = run_samples + samples < run_samples ? UINT64_MAX : run_samples + samples;
        }
      }
      bool floored = false;
      seconds = program_seconds(seconds, run_samples, options.sample_seconds, floored);
      usage.floored += floored;
    }
    ++usage.runs;
    usage.seconds += seconds;
    for (const RunSections::Section& section : reader.run.sections) {
      SectionUsage& target = usage.sections[section.usage_index];
      if (target.sites.empty()) target.sites.resize(section.samples.size());
      for (size_t site = 0; site < section.samples.size(); ++site) {
        double probability = uniform;
        if (plan != nullptr) {
          auto found = plan->probabilities.find({target.unit, target.scheme, static_cast<uint32_t>(site)});
          if (found != plan->probabilities.end()) probability = found->second;
        }
        const uint64_t samples = section.samples[site];
        usage.samples += samples;
        if (probability <= 0) continue;  // this run could not sample the site: it says nothing of it
        SiteUsage& s = target.sites[site];
        s.executions += estimated_executions(samples, probability);
        s.runs += 1;
        s.probability += probability;
        s.seconds += seconds;
        s.samples += samples;
      }
    }
  }
  return usage;
}

namespace {

std::string sha256_hex(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned size = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < size; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

// The entry lines as write_plan() writes them: the text after its header and id lines.
std::string entry_lines(const std::vector<plan::Entry>& entries) {
  std::ostringstream out;
  plan::write_plan(out, "0", entries);
  std::string text = out.str();
  size_t second = text.find('\n', text.find('\n') + 1);
  return text.substr(second + 1);
}

// A site as the optimisation sees it: m its executions per run, x its executions per CPU second; walks, the entries
// per CPU second of a region it may share with hotter sites of its function, where its weight sends the region to
// its slow side without sampling it; price, the CPU share a second that probability 1 would cost (samples and
// walks); effective, m scaled by the price over that of its samples alone.
struct Demand {
  PlanKey key;
  const std::string* function = nullptr;  // its function's name, when the site information was given
  double training_probability = 0;        // its mean probability in the training runs
  double per_run = 0;
  double per_second = 0;
  double walks = 0;
  double price = 0;
  double effective = 0;
  bool unseen = false;
  bool off = false;  // its function turned off (PlanOptions::fast_seconds): probability 0
};

// Functions turned off (docs/analysis.md, "Functions turned off"): a function whose seen sites execute x times a
// CPU second of the program spends fast_seconds * x of it on their fast sides whatever their probabilities, as
// long as one of them is above 0 (its code with sites runs); above the budget, every site of it goes to
// probability 0, which lets the function run its twin (the runtime's rule: its twin's callees off too). Sites
// never seen count nothing: their upper bound is no estimate of the function's executions.
void turn_off_functions(std::vector<Demand>& demands, const PlanOptions& options, Plan& plan) {
  if (options.fast_seconds <= 0) return;
  std::map<std::pair<std::string_view, std::string_view>, double> executions;  // by (unit, function)
  for (const Demand& d : demands)
    if (d.function != nullptr && !d.unseen) executions[{std::get<0>(d.key), *d.function}] += d.per_second;
  std::erase_if(executions, [&options](const auto& function) {  // what is left: the functions turned off
    return options.fast_seconds * function.second <= options.budget;
  });
  plan.off_functions += executions.size();
  for (Demand& d : demands) {
    if (d.function == nullptr) continue;
    d.off = executions.count({std::get<0>(d.key), *d.function}) > 0;
    plan.off_sites += d.off;
  }
}

}  // namespace

size_t name_functions(Usage& usage, const SitesIndex& sites) {
  size_t unnamed = 0;
  for (SectionUsage& section : usage.sections) {
    section.functions.clear();
    const IndexedSites* found = sites.find(section.unit, section.scheme);
    if (found == nullptr || found->conflicting || found->site_count != section.sites.size()) {
      unnamed += section.sites.size();
      continue;
    }
    std::string_view body = found->body;
    while (!body.empty()) {
      std::string_view line = text::take_line(body);
      Site site;
      parse_site_fields(line, site);
      section.functions.push_back(std::move(site.function));
    }
  }
  return unnamed;
}

Plan make_plan(const Usage& usage, const PlanOptions& options) {
  Plan plan;
  std::vector<Demand> demands;
  for (const SectionUsage& section : usage.sections) {
    for (size_t i = 0; i < section.sites.size(); ++i) {
      const SiteUsage& site = section.sites[i];
      if (site.runs == 0) {  // no run could sample it: nothing is known, it keeps the uniform rate
        ++plan.unknown;
        continue;
      }
      Demand d{{section.unit, section.scheme, static_cast<uint32_t>(i)}};
      if (site.samples == 0) {
        // Never seen executing: taken at the 95 % upper bound of its executions per run. Its samples are Poisson
        // with mean m * (sum of its probabilities), and P(0 samples) = exp(-m * sum) >= 0.05 only if
        // m <= -ln(0.05) / sum, about 3 / sum ("the rule of three").
        d.per_run = -std::log(0.05) / site.probability;
        d.unseen = true;
        ++plan.unseen;
      } else {
        d.per_run = site.executions / site.runs;
      }
      d.per_second = d.per_run * site.runs / site.seconds;
      d.training_probability = site.probability / site.runs;
      if (!section.functions.empty()) d.function = &section.functions[i];
      demands.push_back(std::move(d));
    }
  }
  // The hottest site of each function (by unit: a static function's name is the unit's own). Regions do not
  // cross functions, and a region is entered about as often as its hottest site executes: the entries of a region
  // a site may share are estimated by its function's hottest site, and its weight sends the region to its slow
  // side on its probability of those entries (the countdown is below an added weight w with probability
  // 1 - e^-w = p), of which its own executions are samples, priced as such.
  std::map<std::pair<std::string_view, std::string_view>, double> hottest;
  for (const Demand& d : demands) {
    if (d.function == nullptr) continue;
    double& top = hottest[{std::get<0>(d.key), *d.function}];
    top = std::max(top, d.per_second);
    plan.functions_known = true;
  }
  for (Demand& d : demands) {
    if (d.function != nullptr) {
      d.walks = hottest[{std::get<0>(d.key), *d.function}] - d.per_second;
      if (d.walks > 0) {
        ++plan.beside_hotter;
        plan.unseen_beside_hotter += d.unseen;
      }
    }
    d.price = options.sample_seconds * d.per_second + options.walk_seconds * d.walks;
    d.effective = d.per_run * d.price / (options.sample_seconds * d.per_second);
  }
  turn_off_functions(demands, options, plan);
  plan.sites = demands.size();
  plan.mean_run_seconds = usage.runs == 0 ? 0 : usage.seconds / static_cast<double>(usage.runs);
  plan.uniform_cost =
      usage.seconds > 0 ? static_cast<double>(usage.samples) / usage.seconds * options.sample_seconds : 0;
  // and the walks the training runs' own weights caused, priced as the plan's are
  for (const Demand& d : demands) plan.uniform_cost += d.training_probability * d.walks * options.walk_seconds;

  // Water-filling: at level L each site gets min(cap, L / e) and the cost is
  //   sum over capped sites of cap * price  +  L * sum over the others of price / e,
  // piecewise linear and increasing in L, with a break where L reaches cap * e. Going up the breaks in order
  // finds the largest L whose cost is within the budget, exactly. (price / e is c x / m: with every price its
  // samples' alone, e = m and every site below the cap gets L expected samples.)
  const double cap = options.max_probability, allowed = options.budget;
  std::vector<size_t> order;
  for (size_t i = 0; i < demands.size(); ++i)
    if (!demands[i].off) order.push_back(i);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return demands[a].effective < demands[b].effective; });
  double capped_cost = 0;  // sum of cap * price over the capped sites: a share of the CPU time
  double slope = 0;        // sum of price / e over the others: that share per unit of L
  for (size_t i : order) slope += demands[i].price / demands[i].effective;
  double level = std::numeric_limits<double>::infinity();
  size_t capped = 0;
  for (; capped < order.size(); ++capped) {
    const Demand& d = demands[order[capped]];
    const double limit = cap * d.effective;  // the level where this site reaches the cap
    if (capped_cost + slope * limit > allowed) break;
    capped_cost += cap * d.price;
    slope -= d.price / d.effective;
  }
  if (capped < order.size()) level = slope > 0 ? std::max(0.0, (allowed - capped_cost) / slope) : 0;

  double rate = 0, walks = 0, cost = 0;
  for (const Demand& d : demands) {
    const auto& [unit, scheme, site] = d.key;
    if (d.off) {  // its function's fast sides alone are above the budget (turn_off_functions())
      plan.entries.push_back({unit, scheme, site, 0});
      continue;
    }
    const double probability = std::min(cap, level / d.effective);
    rate += probability * d.per_second;
    walks += probability * d.walks;
    cost += probability * d.price;
    if (probability >= cap) {
      ++plan.capped;
      if (probability * d.per_run < options.target) ++plan.rare;
    } else if (probability * d.per_run < options.target) {
      ++plan.below_target;
    }
    plan.entries.push_back({unit, scheme, site, probability});
  }
  plan.level = level;
  plan.samples_per_second = rate;
  plan.walks_per_second = walks;
  plan.cost = cost;
  plan.id = sha256_hex(entry_lines(plan.entries));
  return plan;
}

bool write_plan_file(const std::string& path, const Plan& plan, std::string& error) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    plan::write_plan(out, plan.id, plan.entries);
    out.flush();
    if (!out) {
      error = std::string("cannot write: ") + std::strerror(errno);
      std::remove(temporary.c_str());
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = std::string("cannot write: ") + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

std::string plan_summary(const Usage& usage, const Plan& plan, const PlanOptions& options, const std::string& path) {
  auto number = [](double value, int digits = 3) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    return std::string(buffer);
  };
  const double samples_per_run = plan.samples_per_second * plan.mean_run_seconds;
  std::string text = "sampler-analyze plan: " + std::to_string(usage.runs) + " runs (" +
                     std::to_string(usage.left_out) + " left out), " + number(plan.mean_run_seconds) +
                     " CPU seconds a run on average";
  if (usage.measured_seconds != usage.seconds) {
    text += " without their own samples (" +
            number(usage.measured_seconds / static_cast<double>(std::max<uint64_t>(usage.runs, 1))) + " measured)";
  }
  if (usage.floored > 0) {
    text += ", " + std::to_string(usage.floored) + " runs taken at " + number((1 - kSampledShareCeiling) * 100) +
            "% of their length (their samples at " + number(options.sample_seconds * 1e9) + " ns would take over " +
            number(kSampledShareCeiling * 100) + "% of it: is --sample-cost this machine's?)";
  }
  text += "; " + std::to_string(plan.sites) + " sites (" + std::to_string(plan.unseen) +
          " never seen executing, taken at their 95% upper bound";
  if (plan.functions_known) {
    text += "; " + std::to_string(plan.beside_hotter) + " beside a hotter site of their function (" +
            std::to_string(plan.unseen_beside_hotter) + " never seen), priced with the slow-side walks they cause";
  } else {
    text += "; functions not known (not given by --sites): slow-side walks not priced";
  }
  if (plan.unknown > 0) text += "; " + std::to_string(plan.unknown) + " no run could sample: not in the plan";
  text += ")\n";
  text += "sampler-analyze plan: level ";
  text += std::isinf(plan.level) ? std::string("unbounded (every site at the maximum probability)")
                                 : number(plan.level) + " expected samples per run for every site below the cap" +
                                       (plan.beside_hotter > 0 ? " and with no hotter site beside it" : "");
  text += "; " + std::to_string(plan.capped) + " sites at probability " + number(options.max_probability) +
          "; target " + number(options.target) + ": ";
  text += plan.below_target == 0
              ? std::string("met")
              : "missed by " + std::to_string(plan.below_target) + " sites (the budget allows no more)";
  if (plan.rare > 0) text += ", " + std::to_string(plan.rare) + " sites at the cap execute too rarely to reach it";
  text += "\n";
  if (options.fast_seconds > 0) {
    text += "sampler-analyze plan: ";
    text += plan.functions_known
                ? std::to_string(plan.off_functions) + " functions turned off (" + std::to_string(plan.off_sites) +
                      " sites at probability 0): their fast sides alone, at " + number(options.fast_seconds * 1e9) +
                      " ns a site's execution, would cost more than the budget"
                : std::string("no function turned off: functions not known (not given by --sites)");
    text += "\n";
  }
  const double walks_per_run = plan.walks_per_second * plan.mean_run_seconds;
  text += "sampler-analyze plan: predicted cost " + number(plan.cost * 100) + "% of a run's CPU time (budget " +
          number(options.budget * 100) + "%): " + number(samples_per_run) + " samples a run at " +
          number(options.sample_seconds * 1e9) + " ns each and " + number(walks_per_run) +
          " slow-side walks at " + number(options.walk_seconds * 1e9) + " ns, " +
          number((samples_per_run * options.sample_seconds + walks_per_run * options.walk_seconds) * 1e3) +
          " ms of CPU a run of the mean length; the training runs' own rates cost " +
          number(plan.uniform_cost * 100) + "%\n";
  text += "sampler-analyze plan: wrote " + escape_field(path) + " (id " + plan.id + ", " +
          std::to_string(plan.entries.size()) + " sites)\n";
  return text;
}

}  // namespace sampler::analysis
