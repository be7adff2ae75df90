// The console's page workers and the one making at a time per page (collector/page_workers.h).
#include "collector/page_workers.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

namespace sampler::collector {

// The calling thread (and the threads it starts: read_runs()' readers inherit both) at the lowest priority: nice
// 19, then SCHED_IDLE, under which a thread runs only on a CPU no other thread wants, and a woken upload thread
// preempts it at once (docs/decisions.md, "The console"). Where SCHED_IDLE is refused, nice 19 stays.
static void lowest_priority() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);  // this thread only (Linux: a tid)
  sched_param param{};
  param.sched_priority = 0;
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
}

PageWorkers::PageWorkers(unsigned count) {
  for (unsigned i = 0; i < count; ++i) {
    threads_.emplace_back([this] {
      lowest_priority();
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock lock(mutex_);
          ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
          if (jobs_.empty()) return;  // stopping, and every job done
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
        // What the page freed (its run list, the ranking's tables) goes back to the system: glibc keeps free
        // pages inside the arenas of the threads that used them (an arena's top is trimmed by the threshold
        // Server::start pins); docs/decisions.md, "The console".
        malloc_trim(0);
      }
    });
  }
}

void PageWorkers::submit(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void PageWorkers::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& thread : threads_)
    if (thread.joinable()) thread.join();
}

void PageFlights::request(const std::string& key, Make make, Waiter waiter) {
  std::lock_guard lock(mutex_);
  auto [it, idle] = flights_.try_emplace(key);
  Flight& flight = it->second;
  if (!idle) {  // being made: wait for the next making, with the others that came meanwhile
    if (!flight.next_make) flight.next_make = std::move(make);
    flight.next.push_back(std::move(waiter));
    return;
  }
  start(key, std::move(make), {std::move(waiter)});
}

void PageFlights::start(const std::string& key, Make make, std::vector<Waiter> waiters) {
  workers_.submit([this, key, make = std::move(make), waiters = std::move(waiters)] {
    const Response response = make();
    for (const Waiter& waiter : waiters) waiter(response);
    std::lock_guard lock(mutex_);
    auto it = flights_.find(key);
    if (!it->second.next_make) {
      flights_.erase(it);
      return;
    }
    Make next = std::move(it->second.next_make);
    std::vector<Waiter> next_waiters = std::move(it->second.next);
    it->second = Flight();
    start(key, std::move(next), std::move(next_waiters));
  });
}

void FreshPages::set_window(double seconds) {
  std::lock_guard lock(mutex_);
  window_ = seconds;
}

double FreshPages::window() const {
  std::lock_guard lock(mutex_);
  return window_;
}

uint64_t FreshPages::generation(const std::string& app) const {
  std::lock_guard lock(mutex_);
  return generation_held(app);
}

uint64_t FreshPages::generation_held(const std::string& app) const {
  auto it = generations_.find(app);
  return it == generations_.end() ? 0 : it->second;
}

std::optional<Response> FreshPages::find(const std::string& path, const std::string& app, double now) const {
  std::lock_guard lock(mutex_);
  auto it = pages_.find(path);
  if (it == pages_.end() || it->second.app != app || now - it->second.began >= window_ ||
      it->second.generation != generation_held(app)) {
    return std::nullopt;
  }
  return it->second.page;
}

void FreshPages::keep(const std::string& path, const std::string& app, uint64_t generation, double began,
                      const Response& page) {
  std::lock_guard lock(mutex_);
  if (window_ <= 0) return;
  if (auto same = pages_.find(path); same != pages_.end() && same->second.began > began) return;  // a later one's
  // What is past the window goes first: the pages kept are those made in the last window, within kMaxBytes.
  for (auto it = pages_.begin(); it != pages_.end();) {
    if (began - it->second.began < window_ && it->first != path) {
      ++it;
      continue;
    }
    bytes_ -= it->second.page.body.size();
    it = pages_.erase(it);
  }
  if (bytes_ + page.body.size() > kMaxBytes) return;
  bytes_ += page.body.size();
  pages_.emplace(path, Kept{app, generation, began, page});
}

void FreshPages::stored(const std::string& app) {
  std::lock_guard lock(mutex_);
  ++generations_[app];
}

}  // namespace sampler::collector
