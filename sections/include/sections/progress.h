// A progress line for long work (sampler-analyze reading reports, sampler-collector export writing runs), as
// `rsync --info=progress2` or `pv` draw one: items done (of how many, when known), megabytes, megabytes per
// second and the time left, redrawn in place on stderr at most every kRedrawSeconds and ended with a newline.
// Only when stderr is a terminal: anywhere else (a file, a pipe, a log) nothing at all is written.
//
// The libraries count (Progress::add); the tools decide whether there is a line at all, and what it says.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace sampler {

class Progress {
 public:
  static constexpr double kRedrawSeconds = 0.25;

  /// `label` starts the line ("sampler-analyze: reading reports"); the line is drawn on `fd` only if it is a
  /// terminal.
  explicit Progress(std::string label, int fd = 2);
  ~Progress();  ///< finish()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Whether anything is drawn (the descriptor is a terminal).
  bool drawing() const { return drawing_; }
  /// How many items the work has in all (0: not known, no percentage or time left).
  void set_total(uint64_t items) { total_.store(items, std::memory_order_relaxed); }
  /// `items` more done, of `bytes` bytes in all. Thread-safe; reads the clock and nothing more between redraws.
  void add(uint64_t items, uint64_t bytes);
  /// Erases the line, so that a diagnostic can go to the terminal on its own line; the next add() draws it again.
  void clear();
  /// Draws the final count and ends the line with a newline, if a line was drawn (once; nothing is drawn after).
  void finish();

 private:
  void draw(bool final);  // with mutex_ held
  double elapsed() const;

  std::string label_;
  int fd_;
  bool drawing_;
  double start_;
  std::atomic<uint64_t> items_{0}, bytes_{0}, total_{0};
  std::atomic<double> next_draw_{0};
  std::mutex mutex_;
  size_t drawn_ = 0;  // columns of the line on the terminal now (0: none); with mutex_ held
  bool started_ = false;  // drawn at least once; with mutex_ held
  bool finished_ = false;
};

}  // namespace sampler
