// The one HTTP client of the sampler's command-line tools: sampler-run's uploads (launcher/src/upload.h) and plan
// downloads (launcher/src/plans.h), and sampler-symbols push. libcurl is loaded with dlopen() when first needed
// (http_client.cpp says why).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sampler::launcher {

/// POSTs `body` to `url` with `headers` ("Name: value"), within `timeout_ms`, through libcurl (loaded when first
/// needed). True when an answer came: `status` is its HTTP status and `answer` its body (at most 4 KiB); false
/// when none did, with curl's error in `answer`. `ca_file`, when not empty, is the PEM file of the certificate
/// authorities to trust for https (else the system's).
bool http_post(const std::string& url, const std::vector<std::string>& headers, std::string_view body,
               uint64_t timeout_ms, long& status, std::string& answer, const std::string& ca_file = {});

/// GETs `url` with `headers`, within `timeout_ms`, keeping at most `max_bytes` of the answer (a longer one fails, as
/// no answer does). True when an answer came: `status` and its body in `answer`; false with curl's error in
/// `answer`.
bool http_get(const std::string& url, const std::vector<std::string>& headers, size_t max_bytes, uint64_t timeout_ms,
              long& status, std::string& answer, const std::string& ca_file = {});

/// URL with `path` ("/api/reports") appended unless it already ends with it (trailing slashes dropped).
std::string api_endpoint(std::string url, std::string_view path);

}  // namespace sampler::launcher
