// Line-by-line input for reports: descriptors or memory, plain or gzip, LF or CRLF (see sections/line_reader.h).
//
// The reader keeps a window [begin, end) of unread bytes. Plain memory input is used in place (the window
// is a view into it, nothing is copied); descriptors and gzip streams are read into one buffer of
// kDefaultReadSize bytes that grows only while a single line does not fit, up to max_line + 1 bytes. So
// every complete line in the window is at most max_line bytes long, and a longer line is detected when the
// window is full without a "\n": it is reported and skipped by reading on until its end, never buffered.
#include "sections/line_reader.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "inflater.h"

namespace sampler {

namespace {

// gzip magic bytes (RFC 1952 section 2.3.1): how compressed reports are recognised (docs/formats.md section 3).
constexpr unsigned char kGzipMagic0 = 0x1f;
constexpr unsigned char kGzipMagic1 = 0x8b;

bool starts_with_gzip_magic(const char* data, size_t size) {
  return size >= 2 && static_cast<unsigned char>(data[0]) == kGzipMagic0 &&
         static_cast<unsigned char>(data[1]) == kGzipMagic1;
}

// read(2) without EINTR failures: > 0 bytes read, 0 at the end, -1 on error (message set).
ptrdiff_t read_descriptor(int fd, char* out, size_t size, std::string& error) {
  for (;;) {
    ssize_t n = ::read(fd, out, size);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    error = std::string("read error: ") + std::strerror(errno);
    return -1;
  }
}

// Decompressed or plain bytes for the line buffer.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  /// > 0 bytes written to out, 0 at the end, -1 on error (message set).
  virtual ptrdiff_t read(char* out, size_t size, std::string& error) = 0;
};

class DescriptorStream final : public ByteStream {
 public:
  explicit DescriptorStream(int fd) : fd_(fd) {}
  ptrdiff_t read(char* out, size_t size, std::string& error) override {
    return read_descriptor(fd_, out, size, error);
  }

 private:
  int fd_;
};

// Compressed bytes for the gzip stream.
class CompressedInput {
 public:
  virtual ~CompressedInput() = default;
  /// Sets data to the next piece: returns its size, 0 at the end, -1 on error (message set).
  virtual ptrdiff_t fetch(const unsigned char*& data, std::string& error) = 0;
};

class MemoryInput final : public CompressedInput {
 public:
  explicit MemoryInput(std::string_view memory) : memory_(memory) {}
  ptrdiff_t fetch(const unsigned char*& data, std::string&) override {
    if (done_) return 0;
    done_ = true;
    data = reinterpret_cast<const unsigned char*>(memory_.data());
    return static_cast<ptrdiff_t>(memory_.size());
  }

 private:
  std::string_view memory_;
  bool done_ = false;
};

class DescriptorInput final : public CompressedInput {
 public:
  // `prefix`: the bytes already read from fd to recognise the magic.
  DescriptorInput(int fd, std::string prefix, size_t read_size)
      : fd_(fd), prefix_(std::move(prefix)), buffer_(new char[read_size]), size_(read_size) {}
  ptrdiff_t fetch(const unsigned char*& data, std::string& error) override {
    if (!prefix_sent_) {
      prefix_sent_ = true;
      if (!prefix_.empty()) {
        data = reinterpret_cast<const unsigned char*>(prefix_.data());
        return static_cast<ptrdiff_t>(prefix_.size());
      }
    }
    ptrdiff_t n = read_descriptor(fd_, buffer_.get(), size_, error);
    data = reinterpret_cast<const unsigned char*>(buffer_.get());
    return n;
  }

 private:
  int fd_;
  std::string prefix_;
  bool prefix_sent_ = false;
  std::unique_ptr<char[]> buffer_;
  size_t size_;
};

// gzip (RFC 1952) over compressed input, one member after another: `cat a.gz b.gz` is a valid gzip file
// and decompresses to the concatenation, as gzip(1) does.
class GzipStream final : public ByteStream {
 public:
  explicit GzipStream(std::unique_ptr<CompressedInput> input)
      : input_(std::move(input)), inflater_(Inflater::Format::kGzip) {}

  ptrdiff_t read(char* out, size_t size, std::string& error) override {
    if (!inflater_.ready()) {
      error = inflater_.error();
      return -1;
    }
    if (!deferred_error_.empty()) {
      error = std::move(deferred_error_);
      deferred_error_.clear();
      finished_ = true;
      return -1;
    }
    for (;;) {
      if (finished_) return 0;
      if (inflater_.input_left() == 0 && !input_end_) {
        const unsigned char* data = nullptr;
        ptrdiff_t n = input_->fetch(data, error);
        if (n < 0) return -1;
        if (n == 0) {
          input_end_ = true;
        } else {
          inflater_.add_input(data, static_cast<size_t>(n));
        }
      }
      if (member_done_) {
        if (inflater_.input_left() == 0) {
          if (input_end_) {
            finished_ = true;
            return 0;
          }
          continue;  // fetch more to see whether another member follows
        }
        const std::string_view next = inflater_.peek();
        if (static_cast<unsigned char>(next[0]) != kGzipMagic0 ||
            (next.size() >= 2 && static_cast<unsigned char>(next[1]) != kGzipMagic1)) {
          error = "trailing data after the gzip stream at compressed byte " + std::to_string(inflater_.consumed());
          return -1;
        }
        inflater_.reset();
        member_done_ = false;
      }
      const Inflater::Step step = inflater_.inflate(out, size);
      switch (step.status) {
        case Inflater::Status::kEnd:
          member_done_ = true;
          break;
        case Inflater::Status::kProgress:
          break;
        case Inflater::Status::kNeedInput:  // no progress possible: needs more input
          if (inflater_.input_left() == 0 && input_end_) {
            error = "gzip data is truncated (the input ends inside a compressed stream)";
            return -1;
          }
          break;
        case Inflater::Status::kError:
          error = "corrupt gzip data near compressed byte " + std::to_string(inflater_.consumed()) + ": " +
                  inflater_.error();
          if (step.produced == 0) return -1;
          // Deliver what this call decoded before the damage; the error comes with the next call.
          deferred_error_ = std::move(error);
          return static_cast<ptrdiff_t>(step.produced);
      }
      if (step.produced > 0) return static_cast<ptrdiff_t>(step.produced);
      if (step.status == Inflater::Status::kProgress && inflater_.input_left() == 0 && input_end_) {
        error = "gzip data is truncated (the input ends inside a compressed stream)";
        return -1;
      }
    }
  }

 private:
  std::unique_ptr<CompressedInput> input_;
  Inflater inflater_;
  bool input_end_ = false;
  bool member_done_ = false;
  bool finished_ = false;
  std::string deferred_error_;  // an error found after some output was produced
};

}  // namespace

class LineReader::Source {
 public:
  std::unique_ptr<ByteStream> stream;
};

struct LineReader::Buffer {
  // Input.
  bool is_memory = false;
  std::string_view memory;
  int fd = -1;
  size_t max_line = kMaxLineLength;
  size_t read_size = kDefaultReadSize;

  // The window of unread bytes: data[begin, end).
  const char* data = nullptr;
  size_t begin = 0;
  size_t end = 0;
  bool started = false;
  bool eof = false;       // no byte will arrive after `end`
  bool in_place = false;  // data is `memory` itself (plain memory input)

  // Owned storage for descriptors and gzip. malloc/realloc rather than new[]: a buffer growing for a long
  // line is then moved by the kernel (mremap) instead of being copied while old and new both stay resident.
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> storage;
  size_t capacity = 0;
  size_t initial_capacity = 0;

  /// Moves the unread bytes to the front and resizes the storage to `size` (>= end - begin). False if the
  /// memory cannot be had (the storage is unchanged then).
  bool allocate(size_t size) {
    if (begin > 0) {
      std::memmove(storage.get(), storage.get() + begin, end - begin);
      end -= begin;
      begin = 0;
    }
    char* resized = static_cast<char*>(std::realloc(storage.get(), size));
    if (resized == nullptr) return false;
    (void)storage.release();
    storage.reset(resized);
    capacity = size;
    data = storage.get();
    return true;
  }
};

LineReader::LineReader(int fd, std::string name, DiagnosticSink& sink)
    : source_(std::make_unique<Source>()), buffer_(std::make_unique<Buffer>()), name_(std::move(name)),
      sink_(sink) {
  buffer_->fd = fd;
}

LineReader::LineReader(std::string_view data, std::string name, DiagnosticSink& sink)
    : source_(std::make_unique<Source>()), buffer_(std::make_unique<Buffer>()), name_(std::move(name)),
      sink_(sink) {
  buffer_->is_memory = true;
  buffer_->memory = data;
}

LineReader::~LineReader() = default;

void LineReader::set_limits(size_t max_line_length, size_t read_size) {
  Buffer& b = *buffer_;
  if (b.started) return;
  b.max_line = std::clamp<size_t>(max_line_length, 1, kMaxLineLength);
  b.read_size = std::max<size_t>(read_size, 1);
}

void LineReader::fail(std::string message) {
  Buffer& b = *buffer_;
  // The error belongs to the line being read; an incomplete line before it is dropped.
  sink_.error(name_, line_number_ + 1, std::move(message));
  ++error_count_;
  failed_ = true;
  b.eof = true;
  b.begin = b.end;
}

// Recognises gzip by its magic and sets up the byte stream. False if nothing can be read.
bool LineReader::start() {
  Buffer& b = *buffer_;
  b.started = true;
  // The buffer never holds more than one maximal line and its "\n", so no complete line in it is too long.
  b.initial_capacity = std::min(b.read_size, b.max_line + 1);
  if (b.is_memory) {
    if (starts_with_gzip_magic(b.memory.data(), b.memory.size())) {
      source_->stream = std::make_unique<GzipStream>(std::make_unique<MemoryInput>(b.memory));
      if (!b.allocate(b.initial_capacity)) {
        fail("out of memory for the read buffer");
        return false;
      }
    } else {
      b.in_place = true;
      b.data = b.memory.data();
      b.eof = b.memory.empty();
    }
    return true;
  }
  if (!b.allocate(std::max<size_t>(b.initial_capacity, 2))) {
    fail("out of memory for the read buffer");
    return false;
  }
  // A pipe may deliver one byte at a time: read until two bytes decide the format.
  while (b.end < 2) {
    std::string error;
    ptrdiff_t n = read_descriptor(b.fd, b.storage.get() + b.end, b.capacity - b.end, error);
    if (n < 0) {
      fail(std::move(error));
      return false;
    }
    if (n == 0) {
      b.eof = true;
      break;
    }
    b.end += static_cast<size_t>(n);
  }
  if (starts_with_gzip_magic(b.storage.get(), b.end)) {
    std::string prefix(b.storage.get(), b.end);
    b.begin = b.end = 0;
    b.eof = false;
    source_->stream = std::make_unique<GzipStream>(
        std::make_unique<DescriptorInput>(b.fd, std::move(prefix), b.read_size));
  } else {
    source_->stream = std::make_unique<DescriptorStream>(b.fd);
  }
  return true;
}

// Appends bytes after `end`. Precondition: end - begin <= max_line (the line at begin may still fit).
// Returns false when no byte can come (end of input, or an error already reported).
bool LineReader::fill_more() {
  Buffer& b = *buffer_;
  if (b.eof) return false;
  if (b.in_place) {
    size_t limit = std::min(b.memory.size(), b.begin + b.max_line + 1);
    bool grew = limit > b.end;
    b.end = std::max(b.end, limit);
    b.eof = b.end == b.memory.size();
    return grew;
  }
  if (b.begin > 0) {
    std::memmove(b.storage.get(), b.storage.get() + b.begin, b.end - b.begin);
    b.end -= b.begin;
    b.begin = 0;
  }
  if (b.end == b.capacity) {
    // One line longer than the buffer: grow, never beyond one maximal line and its "\n".
    size_t wanted = std::min(std::max(b.capacity * 2, b.initial_capacity), b.max_line + 1);
    if (!b.allocate(wanted)) {
      fail("out of memory for a line of over " + std::to_string(b.capacity) + " bytes");
      return false;
    }
  } else if (b.capacity > b.initial_capacity && b.end < b.initial_capacity / 2) {
    (void)b.allocate(b.initial_capacity);  // the long line is gone: give its memory back (may fail harmlessly)
  }
  std::string error;
  ptrdiff_t n = source_->stream->read(b.storage.get() + b.end, b.capacity - b.end, error);
  if (n < 0) {
    fail(std::move(error));
    return false;
  }
  if (n == 0) {
    b.eof = true;
    return false;
  }
  b.end += static_cast<size_t>(n);
  return true;
}

// The line at `begin` has more than max_line bytes: report it and read on to its end without keeping it.
void LineReader::skip_long_line() {
  Buffer& b = *buffer_;
  ++line_number_;
  sink_.error(name_, line_number_,
              "line is longer than " + std::to_string(b.max_line) + " bytes; skipped");
  ++error_count_;
  if (b.in_place) {
    const void* newline = std::memchr(b.memory.data() + b.end, '\n', b.memory.size() - b.end);
    b.begin = newline != nullptr ? static_cast<size_t>(static_cast<const char*>(newline) - b.memory.data()) + 1
                                 : b.memory.size();
    b.end = b.begin;
    b.eof = b.end == b.memory.size();
    return;
  }
  b.begin = b.end;
  while (fill_more()) {
    const void* newline = std::memchr(b.data + b.begin, '\n', b.end - b.begin);
    if (newline != nullptr) {
      b.begin = static_cast<size_t>(static_cast<const char*>(newline) - b.data) + 1;
      return;
    }
    b.begin = b.end;
  }
}

// Makes the window start with a complete line, or with the last line of the input (no "\n"). `scanned`:
// bytes after begin already known to hold no "\n". False when no line is left.
bool LineReader::ensure_line(size_t scanned) {
  Buffer& b = *buffer_;
  if (!b.started && !start()) return false;
  for (;;) {
    size_t have = b.end - b.begin;
    if (scanned < have && std::memchr(b.data + b.begin + scanned, '\n', have - scanned) != nullptr) return true;
    if (have > b.max_line) {
      skip_long_line();
      scanned = 0;
      continue;
    }
    scanned = have;
    if (!fill_more()) {
      if (b.eof && b.end > b.begin) return true;  // the last line, without "\n"
      return false;
    }
  }
}

bool LineReader::next(std::string_view& line) {
  Buffer& b = *buffer_;
  size_t have = b.end - b.begin;
  const char* newline = have > 0 ? static_cast<const char*>(std::memchr(b.data + b.begin, '\n', have)) : nullptr;
  const char* start;
  size_t length;
  if (newline != nullptr) {
    start = b.data + b.begin;
    length = static_cast<size_t>(newline - start);
    b.begin += length + 1;
  } else {
    if (!ensure_line(have)) return false;
    start = b.data + b.begin;
    have = b.end - b.begin;
    newline = static_cast<const char*>(std::memchr(start, '\n', have));
    length = newline != nullptr ? static_cast<size_t>(newline - start) : have;
    b.begin += newline != nullptr ? length + 1 : length;
  }
  ++line_number_;
  if (length > 0 && start[length - 1] == '\r') --length;
  line = std::string_view(start, length);
  return true;
}

bool LineReader::next_block(std::string_view& block) {
  Buffer& b = *buffer_;
  size_t have = b.end - b.begin;
  if (have == 0 || std::memchr(b.data + b.begin, '\n', have) == nullptr) {
    if (!ensure_line(have)) return false;
    have = b.end - b.begin;
  }
  const char* start = b.data + b.begin;
  const void* last = memrchr(start, '\n', have);
  block = std::string_view(start, last != nullptr ? static_cast<size_t>(static_cast<const char*>(last) - start) + 1
                                                  : have);
  return true;
}

void LineReader::consume_block(size_t bytes, uint64_t lines) {
  buffer_->begin += bytes;
  line_number_ += lines;
}

}  // namespace sampler
