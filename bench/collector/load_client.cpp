// A flood of uploads for the collector's reliability and load tests (and its benchmark figures): N client
// threads, each with one keep-alive connection, send M reports of about S bytes each, every one until it is
// acknowledged (a client retries after a connection error, a 5xx or a 429, as sampler-run's spool does).
// Reports are gzip-compressed as sampler-run sends them (--encoding plain: as text).
//
//   load_client URL KEY CLIENTS REPORTS-PER-CLIENT SIZE [--acked FILE] [--progress N] [--prefix P] [--path P]
//              [--encoding gzip|plain] [--app NAME] [--bugs B] [--crashes K]
//
// --path sends the same bodies elsewhere than /api/reports: the benchmark's HTTP ceiling POSTs them to /metrics,
// which reads the body and answers without validating or storing anything. --app names the reports' application
// ("load" unless given). --bugs B gives the failing runs (a third) B causes, so that a predictor page has something
// to rank: the failing runs are dealt round the B bugs, and bug b's runs take line 13 (b + 1)'s other branch,
// which no other run takes (its true counter is 0 in them): B predicates that predict failure, one elimination
// round each. Without it every report carries the same samples and no predicate predicts anything. --crashes K:
// the failing runs crash instead (SIGSEGV and a main-backtrace of one of K stacks), for the crash groups.
// Prints "progress N" on stdout (flushed) once N reports are acknowledged, so that a test can act in the middle
// of the flood without sleeping; at the end "reports R clients C seconds T rate X p50_ms A p99_ms B retries Z".
// --acked FILE gets each acknowledged run id, written after its 200 arrived. Exit status 0 when every report
// was acknowledged, 1 when one was refused (4xx other than 429) or retried more than 100000 times.
#include <curl/curl.h>
#include <zlib.h>

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

// The samples part of a report of about `size` bytes (the same for every report of a client: building 20 KB of
// text per report would cost the client, which shares the machine with the server, more than the server's work).
// `bug` (1 to B, 0: none) sets line 13 bug's true counter, 0 in every other report (--bugs).
std::string make_samples(size_t size, unsigned bug = 0) {
  std::string text = "<report id=\"samples\">\n<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"branches\">\n";
  unsigned counter = 0;
  while (text.size() + 200 < size) {
    const unsigned taken = bug != 0 && counter == 13 * bug ? 1 : counter % 13;
    text += std::to_string(counter % 97) + "\t" + std::to_string(taken) + "\n";
    ++counter;
  }
  return text + "</samples>\n</report>\n";
}

// Every third run fails: by exit status, or with --crashes K by SIGSEGV, its main-backtrace (legacy
// backtrace_symbols lines, the same addresses in every run as a program built without PIE has) one of K stacks.
std::string make_outcome(const std::string& app, const std::string& run_id, int number, unsigned crashes) {
  const bool failing = number % 3 == 0;
  std::string text;
  if (failing && crashes != 0) {
    const std::string stack = std::to_string(static_cast<unsigned>(number / 3) % crashes);
    text = "<report id=\"main-backtrace\">\nsignal:11:SIGSEGV:0x0\nload(crash_" + stack + "+0x1)[0x401000]\n"
           "load(caller_" + stack + "+0x10)[0x401100]\nload(main+0x20)[0x401200]\n</report>\n";
  }
  return text + "<report id=\"outcome\">\nrun-id\t" + run_id + "\napp\t" + app + "\n" +
         (failing && crashes != 0 ? "signal\t11" : "exit-status\t" + std::to_string(failing ? 1 : 0)) +
         "\n</report>\n";
}

// Reports go gzip-compressed, as sampler-run sends them. The samples part is deflated once per client (ending in
// a sync flush: byte-aligned, no final block); each report appends its own outcome, deflated on its own, and the
// gzip trailer for the whole (zlib's crc32_combine). One valid gzip member per report at the cost of ~100 bytes.
struct DeflatedPrefix {
  std::string bytes;
  uLong crc = 0;
  size_t length = 0;
};

std::string raw_deflate(const std::string& text, int flush) {
  z_stream stream{};
  deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, flush);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

DeflatedPrefix deflate_prefix(const std::string& samples) {
  DeflatedPrefix prefix;
  prefix.bytes = raw_deflate(samples, Z_SYNC_FLUSH);
  prefix.crc = crc32(0, reinterpret_cast<const Bytef*>(samples.data()), static_cast<uInt>(samples.size()));
  prefix.length = samples.size();
  return prefix;
}

std::string gzip_report(const DeflatedPrefix& prefix, const std::string& tail) {
  static const char kHeader[10] = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, 3};
  std::string out(kHeader, sizeof kHeader);
  out += prefix.bytes;
  out += raw_deflate(tail, Z_FINISH);
  uLong crc = crc32_combine(prefix.crc, crc32(0, reinterpret_cast<const Bytef*>(tail.data()),
                                              static_cast<uInt>(tail.size())),
                            static_cast<z_off_t>(tail.size()));
  uint32_t size = static_cast<uint32_t>(prefix.length + tail.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((crc >> (8 * i)) & 0xff);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((size >> (8 * i)) & 0xff);
  return out;
}

size_t keep_answer(char* data, size_t size, size_t count, void* answer) {
  static_cast<std::string*>(answer)->append(data, size * count);
  return size * count;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: load_client URL KEY CLIENTS REPORTS-PER-CLIENT SIZE [--acked FILE] [--progress N] "
                         "[--prefix P] [--path P] [--encoding gzip|plain] [--app NAME] [--bugs B] [--crashes K]\n");
    return 2;
  }
  std::string base_url = argv[1], path = "/api/reports", key = argv[2];
  int clients = std::atoi(argv[3]), per_client = std::atoi(argv[4]);
  size_t size = static_cast<size_t>(std::atol(argv[5]));
  FILE* acked = nullptr;
  long progress_at = -1;
  std::string prefix = "load", app = "load";
  bool plain = false;
  unsigned bugs = 0, crashes = 0;
  for (int i = 6; i + 1 < argc; i += 2) {
    std::string option = argv[i];
    if (option == "--acked") acked = std::fopen(argv[i + 1], "w");
    if (option == "--progress") progress_at = std::atol(argv[i + 1]);
    if (option == "--prefix") prefix = argv[i + 1];
    if (option == "--path") path = argv[i + 1];
    if (option == "--encoding") plain = std::string(argv[i + 1]) == "plain";
    if (option == "--app") app = argv[i + 1];
    if (option == "--bugs") bugs = static_cast<unsigned>(std::atoi(argv[i + 1]));
    if (option == "--crashes") crashes = static_cast<unsigned>(std::atoi(argv[i + 1]));
  }
  // Bug b's line must be in the report (past its lines a bug would change nothing): samples lines are those of the
  // text less its two opening and two closing tags.
  const std::string plain_samples = make_samples(size);
  const auto text_lines = static_cast<size_t>(std::count(plain_samples.begin(), plain_samples.end(), '\n'));
  if (bugs > 0 && 13 * size_t{bugs} + 4 >= text_lines) {
    std::fprintf(stderr, "load_client: --bugs %u needs more than %u samples lines: SIZE is too small\n", bugs,
                 13 * bugs);
    return 2;
  }
  const std::string url = base_url + path;
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
      if (!plain) headers = curl_slist_append(headers, "Content-Encoding: gzip");
      headers = curl_slist_append(headers, "Expect:");
      std::vector<double> mine;
      std::vector<std::string> samples;  // [bug]: 0 for the runs without one
      std::vector<DeflatedPrefix> deflated;
      for (unsigned bug = 0; bug <= bugs; ++bug) {
        samples.push_back(make_samples(size, bug));
        deflated.push_back(deflate_prefix(samples.back()));
      }
      for (int r = 0; r < per_client && !failed; ++r) {
        std::string run_id = prefix + "-" + std::to_string(c) + "-" + std::to_string(r);
        std::string outcome = make_outcome(app, run_id, r, crashes);
        // make_outcome() fails every third run: those are dealt round the bugs.
        const unsigned bug = bugs != 0 && r % 3 == 0 ? 1 + static_cast<unsigned>(r / 3) % bugs : 0;
        std::string body = plain ? samples[bug] + outcome : gzip_report(deflated[bug], outcome);
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
