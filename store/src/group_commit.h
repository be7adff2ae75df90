// Group commit for both stores: puts that arrive while a transaction is committing wait and then share the next
// one, so that N concurrent uploads cost one commit (one fsync on PostgreSQL, one WAL frame set and lock round on
// SQLite) instead of N. A put returns only after the transaction holding its run committed (or failed): the
// collector acknowledges nothing that is not durable, exactly as with one transaction per put.
//
// No thread of its own and no timer: the first waiting caller becomes the leader, writes everything queued (its
// own run included, up to kMaxBatch), and wakes the others; batches form from the requests that arrived during
// the previous commit, so an idle server commits a lone request at once.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace sampler::store {

/// One run waiting for its transaction: the caller's run, its compressed body, and the outcome.
struct PendingPut {
  const Run* run = nullptr;
  std::string_view compressed;  ///< run->gzip_body, or compress_body(run->body) in `owned`: outside any lock
  std::string owned;
  PutStatus status = PutStatus::kError;
  std::string error;
  bool done = false;
};


class GroupCommit {
 public:
  /// Writes `batch` in one transaction and sets each entry's status (kStored or kDuplicate; a run id twice in
  /// one batch ends as if put one after the other: the report that supersedes() the others kept, the others
  /// kDuplicate) or, when the transaction failed, kError and error.
  using WriteBatch = std::function<void(std::vector<PendingPut*>& batch)>;
  static constexpr size_t kMaxBatch = 256;

  /// `max_writers`: batches written at once (1 for SQLite's single writer; more for PostgreSQL, where batches on
  /// several connections overlap and the server flushes their commits together).
  explicit GroupCommit(WriteBatch write, size_t max_writers = 1)
      : write_(std::move(write)), max_writers_(max_writers) {}

  /// Queues `put`, and returns once a transaction holding it has finished.
  void submit(PendingPut& put) {
    std::unique_lock lock(mutex_);
    queue_.push_back(&put);
    queued_.notify_all();
    while (!put.done) {
      // Queued behind a batch being written (or taken into one): wait for a writer to finish.
      if (writers_ >= max_writers_ || std::find(queue_.begin(), queue_.end(), &put) == queue_.end()) {
        finished_.wait(lock);
        continue;
      }
      ++writers_;
      std::vector<PendingPut*> batch;
      size_t take = std::min(queue_.size(), kMaxBatch);
      batch.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
      lock.unlock();
      write_(batch);
      // A failed batch is written again one run at a time: one bad report (text the database refuses) must
      // not fail the others that happened to share its transaction, again at every retry.
      if (batch.size() > 1 && std::all_of(batch.begin(), batch.end(),
                                          [](const PendingPut* p) { return p->status == PutStatus::kError; })) {
        for (PendingPut* p : batch) {
          std::vector<PendingPut*> alone{p};
          write_(alone);
        }
      }
      lock.lock();
      for (PendingPut* p : batch) p->done = true;
      --writers_;
      batches_ += 1;
      finished_.notify_all();
    }
  }

  /// Store::put() for both stores: compresses the body outside any lock (unless the run brings its gzip), then
  /// waits for the transaction that holds it.
  PutStatus put(const Run& run, std::string& error) {
    PendingPut pending;
    pending.run = &run;
    if (!run.gzip_body.empty()) {
      pending.compressed = run.gzip_body;
    } else {
      pending.owned = compress_body(run.body);
      pending.compressed = pending.owned;
    }
    if (pending.compressed.empty()) {
      error = "cannot compress the report";
      return PutStatus::kError;
    }
    submit(pending);
    if (pending.status == PutStatus::kError) error = pending.error;
    return pending.status;
  }

  /// Waits until at least `count` puts are queued and not yet taken by a leader (for tests, to build a batch
  /// deterministically while a slow write holds the leader).
  void wait_until_queued(size_t count) {
    std::unique_lock lock(mutex_);
    queued_.wait(lock, [&] { return queue_.size() >= count; });
  }

  /// Transactions written so far (for tests: fewer than puts shows that puts were grouped).
  size_t batches() {
    std::lock_guard lock(mutex_);
    return batches_;
  }

 private:
  WriteBatch write_;
  std::mutex mutex_;
  std::condition_variable finished_;
  std::condition_variable queued_;
  std::vector<PendingPut*> queue_;
  const size_t max_writers_;
  size_t writers_ = 0;
  size_t batches_ = 0;
};

}  // namespace sampler::store
