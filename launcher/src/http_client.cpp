// The one HTTP client (launcher/http_client.h): sampler-run's uploads and plan downloads, and sampler-symbols push.
#include "launcher/http_client.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <type_traits>

namespace sampler::launcher {
namespace {

// The answer's body, kept up to `max` bytes: beyond, a POST's answer is cut (only its start is shown), a GET's
// transfer fails (its body is the point, and a cut one is of no use).
struct Answer {
  std::string* text;
  size_t max;
  bool fail_beyond;
};

size_t keep_answer(char* data, size_t size, size_t count, void* context) {
  auto* answer = static_cast<Answer*>(context);
  const size_t bytes = size * count;
  if (answer->fail_beyond && answer->text->size() + bytes > answer->max) return 0;  // curl: a write error
  answer->text->append(data, std::min(bytes, answer->max - std::min(answer->max, answer->text->size())));
  return bytes;
}

// libcurl is loaded only when there is something to upload: linking it would load its dependencies (TLS,
// Kerberos, LDAP, ...) at every start, before the program even begins (the cost: docs/performance.md).
struct Curl {
  decltype(&curl_global_init) global_init;
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_setopt) setopt;
  decltype(&curl_easy_perform) perform;
  decltype(&curl_easy_getinfo) getinfo;
  decltype(&curl_easy_cleanup) cleanup;
  decltype(&curl_easy_strerror) strerror;
  decltype(&curl_slist_append) slist_append;
  decltype(&curl_slist_free_all) slist_free_all;
};

const Curl* load_curl() {
  static const Curl* loaded = []() -> const Curl* {
    void* library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    static Curl curl;
    bool ok = true;
    auto get = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      ok = ok && function != nullptr;
    };
    get(curl.global_init, "curl_global_init");
    get(curl.easy_init, "curl_easy_init");
    get(curl.setopt, "curl_easy_setopt");
    get(curl.perform, "curl_easy_perform");
    get(curl.getinfo, "curl_easy_getinfo");
    get(curl.cleanup, "curl_easy_cleanup");
    get(curl.strerror, "curl_easy_strerror");
    get(curl.slist_append, "curl_slist_append");
    get(curl.slist_free_all, "curl_slist_free_all");
    if (!ok || curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return nullptr;
    return &curl;
  }();
  return loaded;
}

// One request: a POST of `*body`, or a GET when `body` is null.
bool perform(const std::string& url, const std::vector<std::string>& headers, const std::string_view* body,
             Answer kept, uint64_t timeout_ms, long& status, std::string& answer, const std::string& ca_file) {
  const Curl* api = load_curl();
  answer.clear();
  status = 0;
  if (api == nullptr) {
    answer = "cannot load libcurl.so.4";
    return false;
  }
  if (timeout_ms == 0) {
    answer = "no time left to upload";
    return false;
  }
  CURL* curl = api->easy_init();
  if (curl == nullptr) return false;
  curl_slist* list = nullptr;
  for (const std::string& header : headers) list = api->slist_append(list, header.c_str());
  list = api->slist_append(list, "Expect:");  // no 100-continue round trip
  api->setopt(curl, CURLOPT_URL, url.c_str());
  api->setopt(curl, CURLOPT_HTTPHEADER, list);
  if (body != nullptr) {
    api->setopt(curl, CURLOPT_POSTFIELDS, body->data());
    api->setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  } else {
    api->setopt(curl, CURLOPT_HTTPGET, 1L);
  }
  api->setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  api->setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api->setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!ca_file.empty()) api->setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  api->setopt(curl, CURLOPT_WRITEFUNCTION, keep_answer);
  api->setopt(curl, CURLOPT_WRITEDATA, &kept);
  CURLcode rc = api->perform(curl);
  api->getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  api->slist_free_all(list);
  api->cleanup(curl);
  if (rc != CURLE_OK) {
    answer = rc == CURLE_WRITE_ERROR ? "the answer is larger than " + std::to_string(kept.max) + " bytes"
                                     : api->strerror(rc);
    return false;
  }
  return true;
}

}  // namespace

bool http_post(const std::string& url, const std::vector<std::string>& headers, std::string_view body,
               uint64_t timeout_ms, long& status, std::string& answer, const std::string& ca_file) {
  if (!perform(url, headers, &body, Answer{&answer, 4096, false}, timeout_ms, status, answer, ca_file)) return false;
  while (!answer.empty() && answer.back() == '\n') answer.pop_back();
  return true;
}

bool http_get(const std::string& url, const std::vector<std::string>& headers, size_t max_bytes, uint64_t timeout_ms,
              long& status, std::string& answer, const std::string& ca_file) {
  return perform(url, headers, nullptr, Answer{&answer, max_bytes, true}, timeout_ms, status, answer, ca_file);
}

std::string api_endpoint(std::string url, std::string_view path) {
  while (url.ends_with("/")) url.pop_back();
  if (!url.ends_with(path)) url += path;
  return url;
}

}  // namespace sampler::launcher
