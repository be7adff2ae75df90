// The one HTTP client (launcher/http_client.h): sampler-run's uploads and sampler-symbols push.
#include "launcher/http_client.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <type_traits>

namespace sampler::launcher {
namespace {

size_t discard_answer(char* data, size_t size, size_t count, void* answer) {
  static_cast<std::string*>(answer)->append(data, std::min<size_t>(size * count, 4096));
  return size * count;
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

}  // namespace

bool http_post(const std::string& url, const std::vector<std::string>& headers, std::string_view body,
               uint64_t timeout_ms, long& status, std::string& answer, const std::string& ca_file) {
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
  api->setopt(curl, CURLOPT_POSTFIELDS, body.data());
  api->setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  api->setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  api->setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api->setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!ca_file.empty()) api->setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  api->setopt(curl, CURLOPT_WRITEFUNCTION, discard_answer);
  api->setopt(curl, CURLOPT_WRITEDATA, &answer);
  CURLcode rc = api->perform(curl);
  api->getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  api->slist_free_all(list);
  api->cleanup(curl);
  if (rc != CURLE_OK) {
    answer = api->strerror(rc);
    return false;
  }
  while (!answer.empty() && answer.back() == '\n') answer.pop_back();
  return true;
}

std::string api_endpoint(std::string url, std::string_view path) {
  while (url.ends_with("/")) url.pop_back();
  if (!url.ends_with(path)) url += path;
  return url;
}

}  // namespace sampler::launcher
