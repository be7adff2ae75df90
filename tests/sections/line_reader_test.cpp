// LineReader: line splitting, CRLF, gzip, long lines, errors, pipes (sections/line_reader.h).
#include "sections/line_reader.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <zlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>

#include "text_test_util.h"

namespace sampler {
namespace {

using testing::gzip;
using testing::PipeFeeder;
using testing::read_all;
using testing::render;
using Lines = std::vector<std::string>;

struct SplitCase {
  const char* name;
  std::string input;
  Lines lines;
};

const std::vector<SplitCase>& split_cases() {
  static const std::vector<SplitCase> cases = {
      {"empty", "", {}},
      {"one line", "a\n", {"a"}},
      {"last line without newline", "a\nb", {"a", "b"}},
      {"only unterminated", "abc", {"abc"}},
      {"blank lines", "\n\n", {"", ""}},
      {"crlf", "a\r\nb\r\n", {"a", "b"}},
      {"crlf last without newline", "a\r\nb\r", {"a", "b"}},
      {"inner cr kept", "a\rb\n", {"a\rb"}},
      {"only one cr stripped", "a\r\r\n", {"a\r"}},
      {"lone crlf", "\r\n", {""}},
      {"mixed", "x\n\r\nyy\r\nz", {"x", "", "yy", "z"}},
      {"nul bytes kept", std::string("a\0b\n\0\n", 6), {std::string("a\0b", 3), std::string("\0", 1)}},
      {"tag lines", "<report id=\"samples\">\n1\t2\n</report>\n", {"<report id=\"samples\">", "1\t2", "</report>"}},
  };
  return cases;
}

enum class Mode { kMemory, kPipe, kGzipMemory, kGzipPipe };

Lines read_with(Mode mode, const std::string& input, size_t read_size, DiagnosticList& diagnostics) {
  std::string data = (mode == Mode::kGzipMemory || mode == Mode::kGzipPipe) ? gzip(input) : input;
  if (mode == Mode::kMemory || mode == Mode::kGzipMemory) {
    LineReader reader(std::string_view(data), "mem", diagnostics);
    if (read_size != 0) reader.set_limits(LineReader::kMaxLineLength, read_size);
    return read_all(reader);
  }
  PipeFeeder feeder(data, read_size != 0 ? read_size : 4096);
  LineReader reader(feeder.fd(), "<pipe>", diagnostics);
  if (read_size != 0) reader.set_limits(LineReader::kMaxLineLength, read_size);
  return read_all(reader);
}

TEST(LineReader, SplitsLinesInEveryModeAndBufferSize) {
  for (Mode mode : {Mode::kMemory, Mode::kPipe, Mode::kGzipMemory, Mode::kGzipPipe}) {
    for (size_t read_size : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{7}}) {
      for (const SplitCase& c : split_cases()) {
        DiagnosticList diagnostics;
        EXPECT_EQ(read_with(mode, c.input, read_size, diagnostics), c.lines)
            << c.name << " mode " << static_cast<int>(mode) << " read size " << read_size;
        EXPECT_TRUE(diagnostics.items.empty()) << c.name;
      }
    }
  }
}

TEST(LineReader, CountsLines) {
  DiagnosticList diagnostics;
  LineReader reader(std::string_view("a\nb\n\nc"), "mem", diagnostics);
  std::string_view line;
  EXPECT_EQ(reader.line_number(), 0u);
  for (uint64_t expected = 1; expected <= 4; ++expected) {
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(reader.line_number(), expected);
  }
  EXPECT_FALSE(reader.next(line));
  EXPECT_FALSE(reader.next(line));  // stays at the end
  EXPECT_FALSE(reader.failed());
  EXPECT_EQ(reader.name(), "mem");
}

// A line longer than the limit is reported with its number and skipped; its neighbours survive, at every
// position relative to the buffer boundaries.
TEST(LineReader, SkipsLinesOverTheLimit) {
  const std::string input = "short\n" + std::string(11, 'x') + "\n" + std::string(10, 'y') + "\nafter\n" +
                            std::string(25, 'z');
  const Lines expected = {"short", std::string(10, 'y'), "after"};
  const std::vector<std::string> errors = {"E:2:line is longer than 10 bytes; skipped",
                                           "E:5:line is longer than 10 bytes; skipped"};
  for (Mode mode : {Mode::kMemory, Mode::kPipe, Mode::kGzipMemory, Mode::kGzipPipe}) {
    for (size_t read_size : {size_t{1}, size_t{3}, size_t{4}, size_t{11}, size_t{12}, size_t{64}, size_t{4096}}) {
      std::string data = (mode == Mode::kGzipMemory || mode == Mode::kGzipPipe) ? gzip(input) : input;
      DiagnosticList diagnostics;
      Lines lines;
      if (mode == Mode::kMemory || mode == Mode::kGzipMemory) {
        LineReader reader(std::string_view(data), "mem", diagnostics);
        reader.set_limits(10, read_size);
        lines = read_all(reader);
        EXPECT_EQ(reader.error_count(), 2u);
        EXPECT_FALSE(reader.failed());  // a long line is not a read failure
      } else {
        PipeFeeder feeder(data, read_size);
        LineReader reader(feeder.fd(), "<pipe>", diagnostics);
        reader.set_limits(10, read_size);
        lines = read_all(reader);
      }
      EXPECT_EQ(lines, expected) << "mode " << static_cast<int>(mode) << " read size " << read_size;
      EXPECT_EQ(render(diagnostics), errors) << "mode " << static_cast<int>(mode) << " read size " << read_size;
    }
  }
}

TEST(LineReader, CrCountsTowardsTheLimit) {
  DiagnosticList diagnostics;
  LineReader reader(std::string_view("0123456789\r\nok\r\n"), "mem", diagnostics);
  reader.set_limits(10, 4);
  EXPECT_EQ(read_all(reader), Lines{"ok"});
  EXPECT_EQ(render(diagnostics), std::vector<std::string>{"E:1:line is longer than 10 bytes; skipped"});
}

TEST(LineReader, TenMegabyteLine) {
  std::string big(10u << 20, 'q');
  big[12345] = '\t';
  const std::string input = "first\n" + big + "\nlast\n";
  for (Mode mode : {Mode::kMemory, Mode::kPipe, Mode::kGzipMemory}) {
    DiagnosticList diagnostics;
    Lines lines = read_with(mode, input, 0, diagnostics);
    ASSERT_EQ(lines.size(), 3u) << static_cast<int>(mode);
    EXPECT_EQ(lines[0], "first");
    EXPECT_TRUE(lines[1] == big) << static_cast<int>(mode);
    EXPECT_EQ(lines[2], "last");
    EXPECT_TRUE(diagnostics.items.empty());
  }
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// A line of three times the maximum, streamed through a pipe by a writer that never holds it whole: the
// reader reports and skips it, and its memory stays near one maximal line, not the line's length.
TEST(LineReader, StreamsPastAHugeLineWithBoundedMemory) {
  signal(SIGPIPE, SIG_IGN);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const size_t huge = 3 * LineReader::kMaxLineLength;
  std::thread writer([fd = fds[1], huge] {
    std::string chunk(1u << 20, 'h');
    auto put = [fd](std::string_view text) {
      while (!text.empty()) {
        ssize_t n = write(fd, text.data(), text.size());
        if (n <= 0) return;
        text.remove_prefix(static_cast<size_t>(n));
      }
    };
    put("before\n");
    for (size_t sent = 0; sent < huge; sent += chunk.size()) put(chunk);
    put("\nafter\n");
    close(fd);
  });
  long before = peak_rss_kib();
  DiagnosticList diagnostics;
  Lines lines;
  {
    LineReader reader(fds[0], "<pipe>", diagnostics);
    lines = read_all(reader);
  }
  writer.join();
  close(fds[0]);
  EXPECT_EQ(lines, (Lines{"before", "after"}));
  EXPECT_EQ(render(diagnostics),
            std::vector<std::string>{"E:2:line is longer than " + std::to_string(LineReader::kMaxLineLength) +
                                     " bytes; skipped"});
  long growth_kib = peak_rss_kib() - before;
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed buffers in quarantine: the growth says nothing there.
  growth_kib = 0;
#endif
  EXPECT_LT(growth_kib, static_cast<long>(2 * LineReader::kMaxLineLength / 1024)) << "peak RSS grew by "
                                                                                    << growth_kib << " KiB";
}

TEST(LineReader, MaximalLineKeptOneMoreSkipped) {
  const size_t max = LineReader::kMaxLineLength;
  std::string input = std::string(max, 'm') + "\n" + std::string(max + 1, 'n') + "\nend";
  DiagnosticList diagnostics;
  LineReader reader(std::string_view(input), "mem", diagnostics);
  std::string_view line;
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line.size(), max);
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "end");
  EXPECT_EQ(reader.line_number(), 3u);
  EXPECT_EQ(diagnostics.items.size(), 1u);
}

TEST(LineReader, ConcatenatedGzipMembers) {
  std::string data = gzip("one\ntw") + gzip("o\nthree\n") + gzip("") + gzip("four");
  for (size_t read_size : {size_t{0}, size_t{1}, size_t{5}}) {
    DiagnosticList diagnostics;
    {
      LineReader reader(std::string_view(data), "mem", diagnostics);
      if (read_size != 0) reader.set_limits(LineReader::kMaxLineLength, read_size);
      EXPECT_EQ(read_all(reader), (Lines{"one", "two", "three", "four"}));
    }
    PipeFeeder feeder(data, read_size != 0 ? read_size : 4096);
    LineReader reader(feeder.fd(), "<pipe>", diagnostics);
    if (read_size != 0) reader.set_limits(LineReader::kMaxLineLength, read_size);
    EXPECT_EQ(read_all(reader), (Lines{"one", "two", "three", "four"}));
    EXPECT_TRUE(diagnostics.items.empty());
  }
}

std::string numbered_lines(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += "line " + std::to_string(i) + "\t" + std::to_string(i * 7919) + "\n";
  return text;
}

// The lines decoded before the damage are delivered, exactly `kept` of them; then one error; failed() says so.
void expect_lines_then_error(const std::string& data, const std::string& text, size_t kept,
                             const std::string& message) {
  Lines all;
  {
    DiagnosticList unused;
    LineReader whole(std::string_view(text), "x", unused);
    all = read_all(whole);
  }
  ASSERT_LE(kept, all.size());
  all.resize(kept);
  for (bool pipe : {false, true}) {
    DiagnosticList diagnostics;
    Lines lines;
    bool failed;
    if (pipe) {
      PipeFeeder feeder(data, 1000);
      LineReader reader(feeder.fd(), "r.gz", diagnostics);
      lines = read_all(reader);
      failed = reader.failed();
    } else {
      LineReader reader(std::string_view(data), "r.gz", diagnostics);
      lines = read_all(reader);
      failed = reader.failed();
    }
    EXPECT_TRUE(failed);
    EXPECT_TRUE(lines == all) << lines.size() << " lines instead of " << all.size();
    ASSERT_EQ(diagnostics.items.size(), 1u);
    EXPECT_EQ(diagnostics.items[0].file, "r.gz");
    EXPECT_EQ(diagnostics.items[0].line, kept + 1);
    EXPECT_NE(diagnostics.items[0].message.find(message), std::string::npos) << diagnostics.items[0].message;
  }
}

TEST(LineReader, TruncatedGzipKeepsEarlierLines) {
  std::string text = numbered_lines(20000);
  std::string data = gzip(text);
  // Cut inside the deflate data: the complete lines decoded before the cut are kept, the partial one dropped.
  std::string cut = data.substr(0, data.size() - 100);
  size_t decodable = 0;
  {
    z_stream stream{};
    inflateInit2(&stream, 16 + MAX_WBITS);
    std::string out(text.size(), '\0');
    stream.next_in = reinterpret_cast<Bytef*>(cut.data());
    stream.avail_in = static_cast<uInt>(cut.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    inflate(&stream, Z_SYNC_FLUSH);
    decodable = stream.total_out;
    inflateEnd(&stream);
  }
  size_t complete_lines = static_cast<size_t>(std::count(text.begin(), text.begin() + decodable, '\n'));
  EXPECT_GT(complete_lines, 19000u);
  expect_lines_then_error(cut, text, complete_lines, "gzip data is truncated");
  // Only the trailer (CRC and length) missing: every line, then the error.
  expect_lines_then_error(data.substr(0, data.size() - 4), text, 20000, "gzip data is truncated");
}

TEST(LineReader, CorruptGzipKeepsEarlierLines) {
  std::string text = numbered_lines(20000);
  std::string data = gzip(text);
  // A wrong CRC is found after the last byte: every line, then the error.
  data[data.size() - 8] = static_cast<char>(data[data.size() - 8] ^ 1);
  expect_lines_then_error(data, text, 20000, "corrupt gzip data near compressed byte");
  expect_lines_then_error(data, text, 20000, "incorrect data check");
  // A second member whose first block has the reserved type 3: the first member's lines, then the error.
  std::string second = gzip("more\n");
  second[10] = static_cast<char>(0x07);  // after the 10-byte header: BFINAL=1, BTYPE=11
  expect_lines_then_error(gzip(text) + second, text, 20000, "invalid block type");
}

TEST(LineReader, TrailingGarbageAfterGzip) {
  std::string data = gzip("a\nb\n") + "plain text\n";
  DiagnosticList diagnostics;
  LineReader reader(std::string_view(data), "r.gz", diagnostics);
  EXPECT_EQ(read_all(reader), (Lines{"a", "b"}));
  EXPECT_TRUE(reader.failed());
  EXPECT_EQ(render(diagnostics),
            std::vector<std::string>{"E:3:trailing data after the gzip stream at compressed byte " +
                                     std::to_string(gzip("a\nb\n").size())});
}

TEST(LineReader, MagicOnlyIsTruncatedGzip) {
  DiagnosticList diagnostics;
  LineReader reader(std::string_view("\x1f\x8b"), "r", diagnostics);
  EXPECT_TRUE(read_all(reader).empty());
  EXPECT_TRUE(reader.failed());
  EXPECT_EQ(diagnostics.items.size(), 1u);
}

TEST(LineReader, OneByteIsPlainText) {
  DiagnosticList diagnostics;
  PipeFeeder feeder("\x1f", 1);
  LineReader reader(feeder.fd(), "<pipe>", diagnostics);
  EXPECT_EQ(read_all(reader), Lines{"\x1f"});
  EXPECT_TRUE(diagnostics.items.empty());
}

TEST(LineReader, ReadErrorIsReportedOnce) {
  int fd = open("/", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  DiagnosticList diagnostics;
  LineReader reader(fd, "/", diagnostics);
  EXPECT_TRUE(read_all(reader).empty());
  std::string_view line;
  EXPECT_FALSE(reader.next(line));
  EXPECT_TRUE(reader.failed());
  EXPECT_EQ(render(diagnostics), std::vector<std::string>{"E:1:read error: Is a directory"});
  close(fd);
}

TEST(LineReader, ReadsAFile) {
  char path[] = "/tmp/line_reader_testXXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string text = numbered_lines(100000);
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  lseek(fd, 0, SEEK_SET);
  DiagnosticList diagnostics;
  LineReader reader(fd, path, diagnostics);
  Lines lines = read_all(reader);
  close(fd);
  unlink(path);
  ASSERT_EQ(lines.size(), 100000u);
  EXPECT_EQ(lines[99999], "line 99999\t" + std::to_string(99999 * 7919));
}

// Binary garbage: never a crash, every byte accounted for, line numbers consistent.
TEST(LineReader, BinaryGarbage) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    std::string data = testing::random_bytes(1u << 20, seed);
    size_t newlines = static_cast<size_t>(std::count(data.begin(), data.end(), '\n'));
    for (Mode mode : {Mode::kMemory, Mode::kPipe}) {
      DiagnosticList diagnostics;
      Lines lines = read_with(mode, data, mode == Mode::kPipe ? 777 : 0, diagnostics);
      EXPECT_GE(lines.size(), newlines);
      EXPECT_LE(lines.size(), newlines + 1);
      EXPECT_TRUE(diagnostics.items.empty());
    }
    // Garbage that starts like gzip: an error, not a crash.
    data[0] = '\x1f';
    data[1] = '\x8b';
    DiagnosticList diagnostics;
    LineReader reader(std::string_view(data), "g", diagnostics);
    read_all(reader);
    EXPECT_TRUE(reader.failed());
    EXPECT_EQ(diagnostics.error_count(), 1u);
  }
}

}  // namespace
}  // namespace sampler
