// Where the console's pages are made (collector/src/server.cpp): a few threads at the lowest CPU priority
// (PageWorkers), and one making of a page at a time per request (PageFlights). Apart from the server so that a
// test can hold a making where it chooses (tests/collector/page_workers_test.cpp).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
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
/// being made waits for the next making, which answers every request that waited meanwhile. Each answer is still
/// made after its request arrived (never the making already under way, which may have read the store before it);
/// twenty readers of one page cost the store one page at a time instead of a page per worker
/// (docs/performance.md, "Readers beside uploads").
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

}  // namespace sampler::collector
