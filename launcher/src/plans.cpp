// Sampling plans on the users' machines (plans.h): the plan a run gets, the served plan's cache, the plan
// subreport of a report written from the shared counters.
#include "plans.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "launcher/http_client.h"
#include "private_files.h"
#include "sections/core/plan.h"
#include "sections/plan_file.h"

namespace sampler::launcher {
namespace {

namespace fs = std::filesystem;

// The plan's id and whether `text` is a usable plan; `line` and `error` say why not.
bool check_text(std::string_view text, std::string& id, uint64_t& line, std::string& error) {
  plan::Summary summary;
  if (!plan::check_plan(text, summary, line, error)) return false;
  id = std::move(summary.id);
  return true;
}

// The served plan cached at `path`, when it is a usable plan: its id; else "".
std::string cached_plan_id(const std::string& path) {
  std::string text, why, id, error;
  uint64_t line = 0;
  if (path.empty() || !read_private_file(path, kMaxPlanBytes, text, why)) return {};
  return check_text(text, id, line, error) ? id : std::string();
}

// The value of the answer's "plan" member: an id, "null", or "" when the answer has none (or a malformed one).
// The collector writes its answers in one shape (collector/src/plans_api.cpp): no JSON parser is needed.
std::string plan_member(std::string_view answer) {
  constexpr std::string_view kMember = "\"plan\": ";
  const size_t at = answer.find(kMember);
  if (at == std::string_view::npos) return {};
  std::string_view value = answer.substr(at + kMember.size());
  if (value.starts_with("null")) return "null";
  if (!value.starts_with('"')) return {};
  value.remove_prefix(1);
  const std::string_view id = value.substr(0, value.find('"'));
  return plan::valid_id(id) && id.size() < value.size() ? std::string(id) : std::string();
}

}  // namespace

bool check_plan_file(const std::string& path, std::string& id, uint64_t& line, std::string& error) {
  line = 0;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot read the plan";
    return false;
  }
  std::string text;
  text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  if (text.size() > kMaxPlanBytes) {
    error = "a plan larger than " + std::to_string(kMaxPlanBytes) + " bytes";
    return false;
  }
  return check_text(text, id, line, error);
}

std::string served_plan_path(const LaunchSettings& settings) {
  if (settings.state_dir.empty() || settings.upload_url.empty()) return {};
  // One cached plan per collector, application and release: the collector serves each its own.
  return settings.state_dir + "/plans/" +
         hashed_file_name(settings.upload_url + "\n" + settings.app + "\n" + settings.version) + ".plan";
}

bool choose_plan(const LaunchSettings& settings, ChosenPlan& chosen, std::string& error) {
  chosen = ChosenPlan();
  if (settings.no_plan) return true;
  if (!settings.plan.empty()) {
    uint64_t line = 0;
    std::string problem;
    if (!check_plan_file(settings.plan, chosen.id, line, problem)) {
      error = "'" + settings.plan + "'" + (line > 0 ? ":" + std::to_string(line) : "") +
              ": error: " + problem;
      return false;
    }
    std::error_code ec;
    chosen.path = fs::absolute(settings.plan, ec).lexically_normal().string();
    if (ec) chosen.path = settings.plan;
    return true;
  }
  const std::string served = served_plan_path(settings);
  if (served.empty()) return true;
  chosen.id = cached_plan_id(served);
  if (!chosen.id.empty()) {
    chosen.path = served;
    say(settings, "the collector's plan " + chosen.id + " (" + served + ")");
  }
  return true;
}

void refresh_served_plan(const LaunchSettings& settings, std::string_view answer, uint64_t timeout_ms) {
  const std::string current = plan_member(answer), path = served_plan_path(settings);
  if (current.empty() || path.empty()) return;
  std::error_code ec;
  if (current == "null") {
    if (fs::remove(path, ec)) say(settings, "the collector has no plan for this release: the cached one is dropped");
    return;
  }
  if (cached_plan_id(path) == current) return;
  long status = 0;
  std::string text;
  // The upload URL is the collector's, or its /api/reports (api_endpoint() takes both).
  std::string collector = settings.upload_url;
  while (collector.ends_with("/")) collector.pop_back();
  if (collector.ends_with("/api/reports")) collector.resize(collector.size() - std::string_view("/api/reports").size());
  if (!http_get(api_endpoint(collector, "/api/plans/" + current),
                {"Authorization: APIKey " + settings.api_key}, kMaxPlanBytes, timeout_ms, status, text,
                settings.ca_file) ||
      status != 200) {
    say(settings, "plan " + current + " not fetched: " + (status != 0 ? "HTTP " + std::to_string(status) + " " : "") +
                      text.substr(0, 300));
    return;
  }
  std::string id, error, why;
  uint64_t line = 0;
  if (!check_text(text, id, line, error) || id != current) {
    say(settings, "plan " + current + " from the collector not used: " +
                      (error.empty() ? "its id is " + id : "line " + std::to_string(line) + ": " + error));
    return;
  }
  if (!make_private_dir(fs::path(path).parent_path().string(), why) || !write_private_file(path, text)) {
    say(settings, "plan " + current + " not cached: " + (why.empty() ? "cannot write '" + path + "'" : why));
    return;
  }
  say(settings, "plan " + current + " fetched for the next runs (" + path + ")");
}

std::string format_plan_subreport(std::string_view id, std::string_view sparsity) {
  return "<report id=\"plan\">\nid\t" + std::string(id) + "\nsparsity\t" + std::string(sparsity) + "\n</report>\n";
}

}  // namespace sampler::launcher
