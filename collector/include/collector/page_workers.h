// Where the console's pages are made (collector/src/server.cpp): a few threads at the lowest CPU priority
// (PageWorkers), one making of a page at a time per request (PageFlights), and the pages made within the last
// moments served again (FreshPages, collector/src/console.cpp). Apart from the server so that a test can hold a
// making where it chooses, and give the time itself (tests/collector/page_workers_test.cpp).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "collector/request.h"

namespace sampler::collector {

/// The console's pages are made here, not on libmicrohttpd's polling threads: a page can take a second of CPU, and
/// a polling thread busy with it would hold up every other connection it serves (uploads among them). The workers
/// run at the lowest priority (nice 19), so that uploads get the CPU first and pages the rest.
class PageWorkers {
 public:
  explicit PageWorkers(unsigned count);
  ~PageWorkers() { stop(); }
  PageWorkers(const PageWorkers&) = delete;
  PageWorkers& operator=(const PageWorkers&) = delete;
  /// Runs `job` on a worker, in the order given. Thread-safe; a job may submit another.
  void submit(std::function<void()> job);
  /// Finishes the jobs already given (and those they submit), then joins the workers.
  void stop();

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

/// One making of a page at a time per request (path and credentials): a request that arrives while its page is
/// being made waits for the next making, which answers every request that waited meanwhile. Each making starts
/// after its requests arrived (never the making already under way, which may have read the store before them;
/// the console may still answer it with a page made within its window, FreshPages); twenty readers of one page
/// cost the store one page at a time instead of a page per worker (docs/performance.md, "Readers beside
/// uploads").
class PageFlights {
 public:
  using Waiter = std::function<void(const Response&)>;
  using Make = std::function<Response()>;
  /// `workers` must outlive this object, and stop() before it is destroyed.
  explicit PageFlights(PageWorkers& workers) : workers_(workers) {}

  /// Answers `waiter` with the page `make` makes, made on a page worker: now, or once the making of the same
  /// `key` under way is done (then by the first `make` given meanwhile). Thread-safe; `waiter` is called on a
  /// page worker.
  void request(const std::string& key, Make make, Waiter waiter);

 private:
  struct Flight {
    Make next_make;            // the next making, once the current one is done (unset: none waiting)
    std::vector<Waiter> next;  // the requests it answers
  };
  // Called with mutex_ held.
  void start(const std::string& key, Make make, std::vector<Waiter> waiters);

  PageWorkers& workers_;
  std::mutex mutex_;
  std::unordered_map<std::string, Flight> flights_;  // pages being made, by key
};

/// The pages made within the last `window` seconds, served again to the requests that come meanwhile (serve
/// --console-fresh-ms; docs/decisions.md, "The console"): what readers cost the store is then at most one making of
/// each page per window, whatever their number. A page is no longer served once this collector has stored a run or
/// symbols of its application after its making began (stored()), so that what a client uploaded here shows at once
/// on the next page it asks for. Times are seconds of a monotonic clock, given by the caller. Thread-safe.
class FreshPages {
 public:
  /// What the kept pages may take at most, their bodies together: a page past it is not kept.
  static constexpr size_t kMaxBytes = size_t{32} << 20;
  /// 0 (the default here): no page is served again.
  void set_window(double seconds);
  double window() const;
  /// The application's count of stores by this collector: taken before a making reads the store.
  uint64_t generation(const std::string& app) const;
  /// The page kept for `path` (of application `app`), if its making began within the window before `now` and no
  /// store of the application came since.
  std::optional<Response> find(const std::string& path, const std::string& app, double now) const;
  /// Keeps `page`, made for `path` by a making that began at `began` with the application at `generation`.
  void keep(const std::string& path, const std::string& app, uint64_t generation, double began, const Response& page);
  /// This collector stored a run or symbols of `app`: its pages kept so far are made again.
  void stored(const std::string& app);

 private:
  uint64_t generation_held(const std::string& app) const;  // generation(), mutex_ held
  struct Kept {
    std::string app;
    uint64_t generation = 0;
    double began = 0;
    Response page;
  };
  mutable std::mutex mutex_;
  double window_ = 0;
  std::unordered_map<std::string, uint64_t> generations_;  // by application (those of the keys: bounded)
  std::unordered_map<std::string, Kept> pages_;            // by path
  size_t bytes_ = 0;                                       // the kept pages' bodies
};

}  // namespace sampler::collector
