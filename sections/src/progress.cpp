#include "sections/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace sampler {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// 1234567 -> "1,234,567", as rsync writes counts.
std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// H:MM:SS, or M:SS under an hour.
std::string duration(double seconds) {
  const uint64_t s = seconds > 0 && seconds < 1e8 ? static_cast<uint64_t>(seconds + 0.5) : 0;
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%llu:%02u:%02u", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned>(s / 60 % 60), static_cast<unsigned>(s % 60));
  } else {
    std::snprintf(text, sizeof text, "%u:%02u", static_cast<unsigned>(s / 60), static_cast<unsigned>(s % 60));
  }
  return text;
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;  // a progress line is not worth retrying for
    done += static_cast<size_t>(n);
  }
}

}  // namespace

Progress::Progress(std::string label, int fd)
    : label_(std::move(label)), fd_(fd), drawing_(isatty(fd) == 1), start_(now_seconds()) {}

Progress::~Progress() { finish(); }

double Progress::elapsed() const { return now_seconds() - start_; }

void Progress::add(uint64_t items, uint64_t bytes) {
  items_.fetch_add(items, std::memory_order_relaxed);
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (!drawing_) return;
  const double now = now_seconds();
  if (now < next_draw_.load(std::memory_order_relaxed)) return;
  // One thread draws; the others go on with their work.
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_ || now < next_draw_.load(std::memory_order_relaxed)) return;
  next_draw_.store(now + kRedrawSeconds, std::memory_order_relaxed);
  draw(false);
}

void Progress::clear() {
  if (!drawing_) return;
  std::lock_guard lock(mutex_);
  if (drawn_ == 0) return;
  std::string blank(drawn_ + 2, ' ');  // "\r", spaces over the line, "\r" (built in place: GCC 12 at -O3 warns
  blank.front() = blank.back() = '\r';  // wrongly of an overlapping copy in the concatenation)
  write_all(fd_, blank);
  drawn_ = 0;
  next_draw_.store(0, std::memory_order_relaxed);
}

void Progress::finish() {
  if (!drawing_) return;
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (started_) draw(true);  // work that never began (nothing to read) leaves no line
}

void Progress::draw(bool final) {
  const uint64_t items = items_.load(std::memory_order_relaxed), bytes = bytes_.load(std::memory_order_relaxed);
  const uint64_t total = total_.load(std::memory_order_relaxed);
  const double seconds = elapsed();
  const double megabytes = static_cast<double>(bytes) / 1e6;
  char numbers[96];
  std::string line = label_ + ": " + grouped(items);
  if (total > 0) {
    std::snprintf(numbers, sizeof numbers, " of %s (%u%%)", grouped(total).c_str(),
                  static_cast<unsigned>(items >= total ? 100 : items * 100 / total));
    line += numbers;
  }
  std::snprintf(numbers, sizeof numbers, ", %.1f MB, %.1f MB/s", megabytes, seconds > 0 ? megabytes / seconds : 0.0);
  line += numbers;
  if (final) {
    line += ", " + duration(seconds);
  } else if (total > items && items > 0) {
    line += ", " + duration(seconds / static_cast<double>(items) * static_cast<double>(total - items)) + " left";
  }
  // Within the terminal's width: a line that wraps cannot be redrawn in place.
  if (winsize size{}; ioctl(fd_, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 && line.size() >= size.ws_col) {
    line.resize(size.ws_col - 1u);
  }
  const size_t columns = line.size();
  if (columns < drawn_) line.append(drawn_ - columns, ' ');  // over what the longer line before left
  write_all(fd_, "\r" + line + (final ? "\n" : ""));
  drawn_ = final ? 0 : columns;
  started_ = true;
}

}  // namespace sampler
