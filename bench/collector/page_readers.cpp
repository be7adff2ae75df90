// Readers of the console for the console's benchmark (console_bench.sh): READERS people or dashboards, each
// asking for PATH every EVERY seconds over a keep-alive connection of its own, all in this one process (twenty
// `curl` loops would cost the 2-core machine more than the pages they ask for). Reader i first asks at
// i * EVERY / READERS seconds, so the readers are spread over the period as independent people are; a reader
// whose page came late asks again at once, never two pages at a time. Runs until its standard input ends, then
// waits for the pages under way and prints
//   "pages N readers R every S p50_ms A p99_ms B max_ms C failed F"
// Exit status 0 when every page came with 200.
//
//   page_readers URL KEY READERS PATH EVERY-SECONDS
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

size_t discard(char*, size_t size, size_t count, void*) { return size * count; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: page_readers URL KEY READERS PATH EVERY-SECONDS\n");
    return 2;
  }
  const std::string url = std::string(argv[1]) + argv[4], authorization = std::string("Authorization: APIKey ") + argv[2];
  const int readers = std::atoi(argv[3]);
  const double every = std::atof(argv[5]);
  if (readers <= 0 || every <= 0) {
    std::fprintf(stderr, "page_readers: READERS and EVERY-SECONDS must be positive\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::mutex mutex;
  std::condition_variable stop_changed;
  bool stopping = false;
  std::vector<double> latencies;
  long failed = 0;
  const Clock::time_point start = Clock::now();
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(every));
  std::vector<std::thread> threads;
  for (int r = 0; r < readers; ++r) {
    threads.emplace_back([&, r] {
      CURL* curl = curl_easy_init();
      curl_slist* headers = curl_slist_append(nullptr, authorization.c_str());
      curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
      curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
      curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 120000L);
      Clock::time_point next = start + period * r / readers;
      for (;;) {
        {
          std::unique_lock lock(mutex);
          if (stop_changed.wait_until(lock, next, [&] { return stopping; })) break;
        }
        const Clock::time_point asked = Clock::now();
        const CURLcode rc = curl_easy_perform(curl);
        long status = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        const Clock::time_point came = Clock::now();
        {
          std::lock_guard lock(mutex);
          if (rc == CURLE_OK && status == 200) {
            latencies.push_back(std::chrono::duration<double, std::milli>(came - asked).count());
          } else {
            ++failed;
          }
        }
        next = std::max(next + period, came);
      }
      curl_slist_free_all(headers);
      curl_easy_cleanup(curl);
    });
  }
  // Until the benchmark closes our standard input (its uploads are done).
  while (std::getchar() != EOF) {
  }
  {
    std::lock_guard lock(mutex);
    stopping = true;
  }
  stop_changed.notify_all();
  for (std::thread& thread : threads) thread.join();
  std::sort(latencies.begin(), latencies.end());
  auto percentile = [&latencies](double p) {
    return latencies.empty() ? 0.0 : latencies[std::min(latencies.size() - 1, static_cast<size_t>(p * latencies.size()))];
  };
  std::printf("pages %zu readers %d every %g p50_ms %.0f p99_ms %.0f max_ms %.0f failed %ld\n", latencies.size(), readers,
              every, percentile(0.5), percentile(0.99), latencies.empty() ? 0.0 : latencies.back(), failed);
  return failed == 0 ? 0 : 1;
}
