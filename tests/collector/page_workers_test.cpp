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

// The pages made within the window are served again (collector/page_workers.h, FreshPages); the test gives the
// times itself.
Response page_with(std::string body) {
  Response page;
  page.body = std::move(body);
  return page;
}

TEST(FreshPages, APageIsServedWithinTheWindowAndNotAfter) {
  FreshPages fresh;
  fresh.set_window(5);
  fresh.keep("/ui/app/a/predictors/", "a", fresh.generation("a"), 100, page_with("made at 100"));
  ASSERT_TRUE(fresh.find("/ui/app/a/predictors/", "a", 100).has_value());
  EXPECT_EQ(fresh.find("/ui/app/a/predictors/", "a", 104.999)->body, "made at 100");
  EXPECT_FALSE(fresh.find("/ui/app/a/predictors/", "a", 105).has_value()) << "served after the window";
  EXPECT_FALSE(fresh.find("/ui/app/a/", "a", 101).has_value()) << "another path";
  EXPECT_FALSE(fresh.find("/ui/app/a/predictors/", "b", 101).has_value()) << "another application";
  // The page made next replaces it, and the window counts from its making.
  fresh.keep("/ui/app/a/predictors/", "a", fresh.generation("a"), 105, page_with("made at 105"));
  EXPECT_EQ(fresh.find("/ui/app/a/predictors/", "a", 109)->body, "made at 105");
  // A making that began earlier and ended later does not replace a later one's page.
  fresh.keep("/ui/app/a/predictors/", "a", fresh.generation("a"), 104, page_with("made at 104"));
  EXPECT_EQ(fresh.find("/ui/app/a/predictors/", "a", 109)->body, "made at 105");
}

TEST(FreshPages, AStoreHereOfTheApplicationEndsItsPages) {
  FreshPages fresh;
  fresh.set_window(5);
  fresh.keep("/ui/app/a/", "a", fresh.generation("a"), 100, page_with("a"));
  fresh.keep("/ui/app/b/", "b", fresh.generation("b"), 100, page_with("b"));
  fresh.stored("b");
  EXPECT_TRUE(fresh.find("/ui/app/a/", "a", 101).has_value()) << "ended by another application's store";
  EXPECT_FALSE(fresh.find("/ui/app/b/", "b", 101).has_value()) << "served after a store of its application";
  // A making that began before a store and ended after it: its page may lack the run, so it is not served.
  const uint64_t before = fresh.generation("a");
  fresh.stored("a");
  fresh.keep("/ui/app/a/predictors/", "a", before, 101, page_with("begun before the store"));
  EXPECT_FALSE(fresh.find("/ui/app/a/predictors/", "a", 102).has_value());
  fresh.keep("/ui/app/a/predictors/", "a", fresh.generation("a"), 102, page_with("after"));
  EXPECT_EQ(fresh.find("/ui/app/a/predictors/", "a", 103)->body, "after");
}

TEST(FreshPages, NothingIsKeptWithoutAWindowOrPastTheBound) {
  FreshPages fresh;
  fresh.keep("/ui/app/a/", "a", 0, 100, page_with("a"));
  EXPECT_FALSE(fresh.find("/ui/app/a/", "a", 100).has_value()) << "kept with a window of 0";
  fresh.set_window(5);
  fresh.keep("/ui/app/a/", "a", 0, 100, page_with(std::string(FreshPages::kMaxBytes / 2 + 1, 'a')));
  fresh.keep("/ui/app/a/predictors/", "a", 0, 101, page_with(std::string(FreshPages::kMaxBytes / 2 + 1, 'p')));
  EXPECT_TRUE(fresh.find("/ui/app/a/", "a", 102).has_value());
  EXPECT_FALSE(fresh.find("/ui/app/a/predictors/", "a", 102).has_value()) << "kept past FreshPages::kMaxBytes";
  // Once the first is past the window it goes, and the next page fits.
  fresh.keep("/ui/app/a/predictors/", "a", 0, 105, page_with(std::string(FreshPages::kMaxBytes / 2 + 1, 'p')));
  EXPECT_TRUE(fresh.find("/ui/app/a/predictors/", "a", 106).has_value());
  EXPECT_FALSE(fresh.find("/ui/app/a/", "a", 106).has_value());
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
