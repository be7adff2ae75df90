// Helpers shared by the text-format tests: gzip data made with zlib, a pipe fed by a thread, and a
// compact rendering of diagnostics for exact comparisons.
#pragma once

#include <signal.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sections/diagnostics.h"
#include "sections/line_reader.h"

namespace sampler::testing {

/// `data` compressed as one gzip member (RFC 1952), as gzip(1) would write it.
inline std::string gzip(std::string_view data, int level = 6) {
  z_stream stream{};
  if (deflateInit2(&stream, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

/// A pipe whose write end a thread feeds with `data` in pieces of `piece` bytes, then closes.
class PipeFeeder {
 public:
  explicit PipeFeeder(std::string data, size_t piece = 4096) : data_(std::move(data)) {
    signal(SIGPIPE, SIG_IGN);  // the reader may stop early
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe");
    read_fd_ = fds[0];
    int write_fd = fds[1];
    writer_ = std::thread([this, write_fd, piece] {
      size_t at = 0;
      while (at < data_.size()) {
        size_t n = std::min(piece, data_.size() - at);
        ssize_t written = write(write_fd, data_.data() + at, n);
        if (written <= 0) break;
        at += static_cast<size_t>(written);
      }
      close(write_fd);
    });
  }
  ~PipeFeeder() {
    close(read_fd_);
    writer_.join();
  }
  int fd() const { return read_fd_; }

 private:
  std::string data_;
  int read_fd_ = -1;
  std::thread writer_;
};

/// Diagnostics as "W:line:message" / "E:line:message" (the file is checked separately where it matters).
inline std::vector<std::string> render(const DiagnosticList& list) {
  std::vector<std::string> out;
  for (const Diagnostic& d : list.items) {
    out.push_back(std::string(d.severity == Severity::kWarning ? "W:" : "E:") + std::to_string(d.line) + ":" +
                  d.message);
  }
  return out;
}

/// Every line of a reader.
inline std::vector<std::string> read_all(LineReader& reader) {
  std::vector<std::string> lines;
  std::string_view line;
  while (reader.next(line)) lines.emplace_back(line);
  return lines;
}

/// Deterministic random bytes (binary garbage).
inline std::string random_bytes(size_t size, uint32_t seed) {
  std::mt19937 generator(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(generator() & 0xff);
  return out;
}

}  // namespace sampler::testing
