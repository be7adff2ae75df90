// Fuzz target: the collector's request path without HTTP (collector/request.h), as a hostile client drives it.
//
// The first byte picks the request's headers (key, Content-Type, Content-Encoding, body limit flag); the rest is
// the body (bits 4 and 8 together: a whole symbol file POSTed to /api/symbols-*). Checked properties:
// decode_body never yields more than its limit; a report validate_report accepts has a run id that is a safe
// file name; Collector::handle answers with a status the API documents, in JSON whose text holds no raw control
// character; a failure's log line starts with the uuid its answer carries. The store is a SQLite database in a
// temporary directory, made once per process.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "collector/request.h"
#include "fuzz_util.h"

namespace sampler::fuzz {
namespace {

collector::Collector& the_collector() {
  static std::unique_ptr<store::Store> store = [] {
    std::string dir = (std::filesystem::temp_directory_path() / ("collector-fuzz-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(dir);
    std::string error;
    auto s = store::open_store("sqlite:" + dir + "/reports.db", error);
    FUZZ_CHECK(s != nullptr);
    return s;
  }();
  static collector::Collector instance = [] {
    collector::KeyTable keys;
    std::string error;
    FUZZ_CHECK(keys.load("app\tkey\treports,symbols,plans\n", error));  // every path open to the fuzzer
    collector::Limits limits;
    limits.max_report_bytes = 1u << 20;
    limits.rate_burst = 1e12;
    return collector::Collector(*store, std::move(keys), limits);
  }();
  return instance;
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler;
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  std::string_view body = fuzz::as_text(data + 1, size - 1);

  std::string text, error;
  collector::DecodeStatus decoded = collector::decode_body(body, (selector & 1) ? "gzip" : "", 4096, text, error);
  FUZZ_CHECK(decoded != collector::DecodeStatus::kOk || text.size() <= 4096);
  collector::ValidReport valid;
  if (collector::validate_report(body, valid, error)) {
    FUZZ_CHECK(collector::valid_run_id(valid.outcome.run_id));
  } else {
    FUZZ_CHECK(error.starts_with("line "));
  }

  collector::Request request;
  request.method = (selector & 2) ? "POST" : "GET";
  // Both bits: a symbol upload, the body a whole GSYM file or symbfile checked by the formats library.
  static constexpr const char* kSymbolPaths[] = {"/api/symbols-gsym", "/api/symbols-ranges", "/api/symbols-returnpads"};
  // Neither bit: a plan upload (the body a plan file, checked by the codec), a plan's download, or no such path.
  static constexpr const char* kOtherPaths[] = {"/api/plans", "/api/plans/p-1", "/elsewhere"};
  request.path = (selector & 12) == 12 ? kSymbolPaths[body.size() % 3]
                 : (selector & 4)      ? "/api/reports"
                 : (selector & 8)      ? "/health"
                                       : kOtherPaths[body.size() % 3];
  if (body.size() % 2 == 0) request.version = "1.0";
  request.file_id = "EjRWeJq83vARIjNEVWZ3iJmqu8w";
  request.authorization = (selector & 16) ? "APIKey key" : "APIKey wrong";
  request.content_type = (selector & 32) ? "text/plain" : "";
  request.content_encoding = (selector & 64) ? "gzip" : "";
  request.body_too_large = (selector & 128) != 0;
  request.body = body;
  collector::Response response = fuzz::the_collector().handle(request, 0);
  // 409: a symbol file pushed again with other bytes (an earlier input may have stored one under the same name).
  static const std::set<int> documented = {200, 400, 401, 403, 404, 405, 409, 413, 415, 429, 503};
  FUZZ_CHECK(documented.count(response.status) == 1);
  // A JSON answer holds no raw control character; a plan's download is the plan as it was stored (TABs and all).
  if (response.content_type == "application/json") {
    for (char c : response.body) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 || c == '\n');
  }
  for (char c : response.log) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20);
  if (response.status != 200) {
    size_t at = response.body.find("\"uuid\": \"");
    FUZZ_CHECK(at != std::string::npos);
    FUZZ_CHECK(response.log.starts_with(response.body.substr(at + 9, 36)));
  }
  return 0;
}
