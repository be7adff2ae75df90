// A flood of uploads for the collector's reliability and load tests (and its benchmark figures): N client
// threads, each with one keep-alive connection, send M reports of about S bytes each, every one until it is
// acknowledged (a client retries after a connection error, a 5xx or a 429, as sampler-run's spool does).
//
//   load_client URL KEY CLIENTS REPORTS-PER-CLIENT SIZE [--acked FILE] [--progress N] [--prefix P]
//
// Prints "progress N" on stdout (flushed) once N reports are acknowledged, so that a test can act in the middle
// of the flood without sleeping; at the end "reports R clients C seconds T rate X p50_ms A p99_ms B retries Z".
// --acked FILE gets each acknowledged run id, written after its 200 arrived. Exit status 0 when every report
// was acknowledged, 1 when one was refused (4xx other than 429) or retried more than 100000 times.
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::string make_report(const std::string& run_id, size_t size) {
  std::string text = "<report id=\"samples\">\n<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"branches\">\n";
  unsigned counter = 0;
  while (text.size() + 200 < size) {
    text += std::to_string(counter % 97) + "\t" + std::to_string(counter % 13) + "\n";
    ++counter;
  }
  text += "</samples>\n</report>\n<report id=\"outcome\">\nrun-id\t" + run_id + "\napp\tload\nexit-status\t" +
          std::to_string(counter % 3 == 0 ? 1 : 0) + "\n</report>\n";
  return text;
}

size_t keep_answer(char* data, size_t size, size_t count, void* answer) {
  static_cast<std::string*>(answer)->append(data, size * count);
  return size * count;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: load_client URL KEY CLIENTS REPORTS-PER-CLIENT SIZE [--acked FILE] [--progress N] "
                         "[--prefix P]\n");
    return 2;
  }
  std::string url = std::string(argv[1]) + "/api/reports", key = argv[2];
  int clients = std::atoi(argv[3]), per_client = std::atoi(argv[4]);
  size_t size = static_cast<size_t>(std::atol(argv[5]));
  FILE* acked = nullptr;
  long progress_at = -1;
  std::string prefix = "load";
  for (int i = 6; i + 1 < argc; i += 2) {
    std::string option = argv[i];
    if (option == "--acked") acked = std::fopen(argv[i + 1], "w");
    if (option == "--progress") progress_at = std::atol(argv[i + 1]);
    if (option == "--prefix") prefix = argv[i + 1];
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::atomic<long> done{0}, retries{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::vector<double> latencies;
  Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      CURL* curl = curl_easy_init();
      std::string authorization = "Authorization: APIKey " + key;
      curl_slist* headers = curl_slist_append(nullptr, authorization.c_str());
      headers = curl_slist_append(headers, "Content-Type: text/plain");
      headers = curl_slist_append(headers, "Expect:");
      std::vector<double> mine;
      for (int r = 0; r < per_client && !failed; ++r) {
        std::string run_id = prefix + "-" + std::to_string(c) + "-" + std::to_string(r);
        std::string body = make_report(run_id, size);
        for (long attempt = 0;; ++attempt) {
          if (attempt > 100000) {
            failed = true;
            break;
          }
          std::string answer;
          curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
          curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
          curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
          curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
          curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep_answer);
          curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
          curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
          curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
          Clock::time_point sent = Clock::now();
          CURLcode rc = curl_easy_perform(curl);
          long status = 0;
          curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
          if (rc == CURLE_OK && status == 200) {
            mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
            if (acked != nullptr) {
              std::lock_guard lock(mutex);
              std::fprintf(acked, "%s\n", run_id.c_str());
              std::fflush(acked);
            }
            long now_done = ++done;
            if (now_done == progress_at) {
              std::printf("progress %ld\n", now_done);
              std::fflush(stdout);
            }
            break;
          }
          if (rc == CURLE_OK && status >= 400 && status < 500 && status != 429 && status != 408) {
            std::fprintf(stderr, "load_client: %s refused: %ld %s\n", run_id.c_str(), status, answer.c_str());
            failed = true;
            break;
          }
          // The collector is down or busy: back off a little, as a real client would, and try again.
          ++retries;
          std::this_thread::sleep_for(std::chrono::milliseconds(std::min<long>(2 + attempt, 50)));
        }
      }
      curl_slist_free_all(headers);
      curl_easy_cleanup(curl);
      std::lock_guard lock(mutex);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies.begin(), latencies.end());
  auto percentile = [&latencies](double p) {
    return latencies.empty() ? 0.0 : latencies[std::min(latencies.size() - 1, static_cast<size_t>(p * latencies.size()))];
  };
  std::printf("reports %ld clients %d seconds %.2f rate %.0f p50_ms %.2f p99_ms %.2f retries %ld\n", done.load(), clients,
              seconds, static_cast<double>(done.load()) / seconds, percentile(0.5), percentile(0.99), retries.load());
  if (acked != nullptr) std::fclose(acked);
  return failed || done != static_cast<long>(clients) * per_client ? 1 : 0;
}
