// The console's one making of a page at a time (collector/page_workers.h, PageFlights): the test holds the first
// making inside its page-making function until every other request has arrived, then checks which making
// answered each request.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collector/page_workers.h"

namespace sampler::collector {
namespace {

// What the test and the makings share: the makings so far, a gate that holds the first one, the answers.
struct Recorder {
  std::mutex mutex;
  std::condition_variable changed;
  int makings = 0;
  bool first_started = false, first_released = false;
  std::vector<std::string> answers;  // by request, "" until answered

  // A making: the page's body names the making that made it.
  PageFlights::Make make(bool hold) {
    return [this, hold] {
      std::unique_lock lock(mutex);
      const int number = ++makings;
      if (hold) {
        first_started = true;
        changed.notify_all();
        changed.wait(lock, [this] { return first_released; });
      }
      Response response;
      response.body = "making " + std::to_string(number);
      return response;
    };
  }
  PageFlights::Waiter waiter(size_t request) {
    return [this, request](const Response& page) {
      std::lock_guard lock(mutex);
      answers[request] = page.body;
      changed.notify_all();
    };
  }
  size_t answered() {
    size_t n = 0;
    for (const std::string& answer : answers) n += !answer.empty();
    return n;
  }
};

TEST(PageFlights, OneMakingAnswersEveryRequestThatCameDuringTheLast) {
  constexpr size_t kRequests = 21;  // the first, and twenty readers of the same page while it is made
  PageWorkers workers(2);           // as the server: a second worker is free to make a second page
  Recorder recorder;
  recorder.answers.assign(kRequests + 1, "");
  {
    PageFlights flights(workers);
    flights.request("/ui/app/a/predictors/\nAPIKey k", recorder.make(/*hold=*/true), recorder.waiter(0));
    {
      std::unique_lock lock(recorder.mutex);
      recorder.changed.wait(lock, [&] { return recorder.first_started; });
    }
    for (size_t i = 1; i < kRequests; ++i) {
      flights.request("/ui/app/a/predictors/\nAPIKey k", recorder.make(false), recorder.waiter(i));
    }
    // Another page (here: the same path with other credentials) is not held up by the one being made.
    flights.request("/ui/app/a/predictors/\nAPIKey other", recorder.make(false), recorder.waiter(kRequests));
    {
      std::unique_lock lock(recorder.mutex);
      recorder.changed.wait(lock, [&] { return !recorder.answers[kRequests].empty(); });
      EXPECT_EQ(recorder.answered(), 1u) << "a request was answered while the first making was held";
      recorder.first_released = true;
      recorder.changed.notify_all();
      recorder.changed.wait(lock, [&] { return recorder.answered() == kRequests + 1; });
    }
    workers.stop();  // every making done before the flights go
  }
  // Three makings: the first (held), the other credentials' page, and one for the twenty that came meanwhile,
  // which is not the first making (it may have read the store before they arrived).
  EXPECT_EQ(recorder.makings, 3);
  EXPECT_EQ(recorder.answers[0], "making 1");
  EXPECT_EQ(recorder.answers[kRequests], "making 2");
  for (size_t i = 1; i < kRequests; ++i) EXPECT_EQ(recorder.answers[i], "making 3") << "request " << i;
}

TEST(PageFlights, AFlightEndsWithItsLastMaking) {
  // Requests one after another, each answered before the next: each gets a making of its own.
  PageWorkers workers(2);
  Recorder recorder;
  recorder.answers.assign(3, "");
  {
    PageFlights flights(workers);
    for (size_t i = 0; i < 3; ++i) {
      flights.request("/ui/", recorder.make(false), recorder.waiter(i));
      std::unique_lock lock(recorder.mutex);
      recorder.changed.wait(lock, [&] { return !recorder.answers[i].empty(); });
    }
    workers.stop();
  }
  EXPECT_EQ(recorder.answers, (std::vector<std::string>{"making 1", "making 2", "making 3"}));
}

TEST(PageWorkers, PagesRunAtTheIdlePriorityAndSoDoTheThreadsTheyStart) {
  // Uploads keep their throughput beside readers because page work never takes a CPU an upload wants
  // (docs/decisions.md, "The console"): the workers, and the reading threads a page starts, are SCHED_IDLE.
  PageWorkers workers(2);
  std::mutex mutex;
  std::condition_variable done;
  int worker_policy = -1, child_policy = -1, worker_nice = 0;
  workers.submit([&] {
    int policy = sched_getscheduler(0), child = -1;
    const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    std::thread([&child] { child = sched_getscheduler(0); }).join();
    std::lock_guard lock(mutex);
    worker_policy = policy;
    child_policy = child;
    worker_nice = nice;
    done.notify_all();
  });
  {
    std::unique_lock lock(mutex);
    done.wait(lock, [&] { return worker_policy != -1; });
  }
  workers.stop();
  EXPECT_EQ(worker_policy, SCHED_IDLE);
  EXPECT_EQ(child_policy, SCHED_IDLE);
  EXPECT_EQ(worker_nice, 19);
  EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);  // the caller's own thread is left alone
}

}  // namespace
}  // namespace sampler::collector
