// Sampling plans at the collector (docs/collection.md, "Sampling plans"): POST /api/plans?version=V stores a plan
// (checked all or nothing with the plan codec, as the runtime reads it) and makes it the current plan of the key's
// application and release V; GET /api/plans/ID gives a stored plan back to any key of its application; and the
// answer to each stored report names the current plan of its application and release, so that sampler-run fetches
// a plan only when it changed.
#include "collector/request.h"
#include "sections/core/plan.h"
#include "sections/diagnostics.h"  // json_string
#include "sections/plan_file.h"

namespace sampler::collector {

std::string Collector::current_plan_member(const std::string& app, const std::string& version, Response& response) {
  std::string id, error;
  switch (store_.current_plan(app, version, id, error)) {
    case store::GetStatus::kFound: return ", \"plan\": " + json_string(id);
    case store::GetStatus::kMissing: return ", \"plan\": null";
    case store::GetStatus::kError:
      // The report is stored all the same; its client keeps the plan it has.
      response.log = "the current plan of app=" + json_string(app) + " version=" + json_string(version) +
                     " is unknown: " + json_string(error);
      return "";
  }
  return "";
}

Response Collector::upload_plan(const Request& request, double now) {
  KeyTable::Holder holder;
  if (std::optional<Response> refused = admit(request, now, &KeyTable::Holder::plans,
                                              "this API key may not upload plans (keys.tsv: plans)", "", holder))
    return *refused;
  const std::string& app = holder.app;
  if (!request.version) {
    return failure(400, "missing-version",
                   "name the release the plan is for: POST /api/plans?version=VERSION (an empty VERSION for runs "
                   "without one)",
                   app);
  }
  std::string text, error;
  switch (decode_body(request.body, request.content_encoding, limits_.max_report_bytes, text, error)) {
    case DecodeStatus::kOk: break;
    case DecodeStatus::kTooLarge:
      return failure(413, "plan-too-large",
                     "the plan is larger than " + std::to_string(limits_.max_report_bytes) + " bytes (--max-report)",
                     app);
    case DecodeStatus::kCorrupt: return failure(400, "bad-encoding", error, app);
  }
  plan::Summary summary;
  uint64_t line = 0;
  if (!plan::check_plan(text, summary, line, error)) {
    return failure(400, "bad-plan", "line " + std::to_string(line) + ": " + error, app);
  }
  const std::string version(*request.version);
  store::Plan stored{app, summary.id, 0, std::move(text)};
  switch (store_.put_plan(stored, version, error)) {
    case store::PutStatus::kError: return failure(503, "storage-error", error, app);
    case store::PutStatus::kConflict:
      return failure(409, "plan-conflict",
                     "a different plan is already stored under the id '" + summary.id +
                         "': a changed plan needs a new id (a run's plan id names exactly one plan)",
                     app);
    case store::PutStatus::kStored:
    case store::PutStatus::kDuplicate: break;
  }
  Response response;
  response.body = "{\"success\": true, \"status\": 200, \"plan\": " + json_string(summary.id) +
                  ", \"version\": " + json_string(version) + ", \"entries\": " + std::to_string(summary.entries) +
                  "}\n";
  return response;
}

Response Collector::download_plan(const Request& request, double now) {
  KeyTable::Holder holder;
  // Any key of the application: its users' key (sampler-run's) fetches the plans their runs are to use.
  if (std::optional<Response> refused = admit(request, now, nullptr, "", "", holder)) return *refused;
  const std::string& app = holder.app;
  const std::string_view id = request.path.substr(std::string_view("/api/plans/").size());
  std::string text, error;
  // Another application's plan is as unknown as one never stored: the answer says nothing of it.
  const store::GetStatus found =
      plan::valid_id(id) ? store_.get_plan(app, id, text, error) : store::GetStatus::kMissing;
  if (found == store::GetStatus::kError) return failure(503, "storage-error", error, app);
  if (found == store::GetStatus::kMissing) {
    return failure(404, "no-such-plan", "application '" + app + "' has no plan of that id", app);
  }
  Response response;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::move(text);
  return response;
}

}  // namespace sampler::collector
