// The files a user names (sections/input_files.h): kinds checked before reading, bounded
// reading of pipes, and the one directory walk.
#include "sections/input_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace sampler {
namespace {

namespace fs = std::filesystem;

/// A fresh directory for one test, removed afterwards.
class Scratch {
 public:
  Scratch() {
    char name[] = "/tmp/input-files-test.XXXXXX";
    path_ = mkdtemp(name);
  }
  ~Scratch() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(InputFiles, RegularFilesAndDirectories) {
  Scratch scratch;
  write_file(scratch / "a.txt", "hello");
  DiagnosticList diagnostics;
  std::optional<InputFile> file = open_input(scratch / "a.txt", {}, diagnostics);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->kind, FileKind::kRegular);
  EXPECT_EQ(file->size, 5u);
  char buffer[8];
  EXPECT_EQ(read(file->fd.get(), buffer, sizeof buffer), 5);  // blocking, at the start

  EXPECT_FALSE(open_input(scratch.path(), {}, diagnostics));
  EXPECT_TRUE(open_input(scratch.path(), {.directory = true}, diagnostics));
  EXPECT_FALSE(open_input(scratch / "missing", {.directory = true, .pipe = true}, diagnostics));
  ASSERT_EQ(diagnostics.items.size(), 2u);
  EXPECT_EQ(diagnostics.items[0].message, "is a directory");
  EXPECT_EQ(diagnostics.items[0].code, DiagnosticCode::kIsDirectory);
  EXPECT_EQ(diagnostics.items[1].message, "cannot open: No such file or directory");
  EXPECT_EQ(diagnostics.items[1].code, DiagnosticCode::kCannotOpen);
}

// A FIFO without a writer made open() wait forever; a device was read without end.
TEST(InputFiles, AFifoWithoutAWriterIsNotWaitedForAndDevicesAreRefused) {
  Scratch scratch;
  const std::string fifo = scratch / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  DiagnosticList diagnostics;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(open_input(fifo, {}, diagnostics));
  std::optional<InputFile> pipe = open_input(fifo, {.pipe = true}, diagnostics);
  ASSERT_TRUE(pipe);
  EXPECT_EQ(pipe->kind, FileKind::kPipe);
  std::string text;
  EXPECT_TRUE(read_to_end(pipe->fd.get(), fifo, kMaxPipedFileSize, text, diagnostics));  // no writer: empty
  EXPECT_EQ(text, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));  // would hang before the fix

  EXPECT_FALSE(open_input("/dev/zero", {.directory = true, .pipe = true}, diagnostics));
  ASSERT_EQ(diagnostics.items.size(), 2u);
  EXPECT_EQ(diagnostics.items[0].message, "not a regular file (a FIFO)");
  EXPECT_EQ(diagnostics.items[0].code, DiagnosticCode::kNotRegularFile);
  EXPECT_EQ(diagnostics.items[1].message, "not a regular file, directory or pipe (a character device)");
}

TEST(InputFiles, APipeIsReadToItsEndWithABound) {
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  std::thread writer([&] {
    std::string chunk(1000, 'x');
    for (int i = 0; i < 10; ++i) (void)!::write(ends[1], chunk.data(), chunk.size());
    close(ends[1]);
  });
  DiagnosticList diagnostics;
  std::string text;
  EXPECT_FALSE(read_to_end(ends[0], "pipe", 4096, text, diagnostics));
  writer.join();
  close(ends[0]);
  ASSERT_EQ(diagnostics.items.size(), 1u);
  EXPECT_EQ(diagnostics.items[0].code, DiagnosticCode::kTooLarge);
  EXPECT_EQ(diagnostics.items[0].message,
            "more than 4096 bytes: a FILE that is not a regular file is read whole, up to that limit");
  EXPECT_LE(text.size(), 4096u);
}

TEST(InputFiles, WalkDirectory) {
  Scratch scratch;
  write_file(scratch / "b/z.sites", "");
  write_file(scratch / "b/a.sites", "");
  write_file(scratch / "a.sites", "");
  write_file(scratch / "notes.txt", "");
  write_file(scratch / "skip/x.sites", "");
  write_file(scratch / "elsewhere/y.sites", "");
  fs::create_directory_symlink(scratch / "elsewhere", scratch / "b/linked-dir");  // never followed
  fs::create_symlink(scratch / "elsewhere/y.sites", scratch / "b/linked.sites");
  fs::create_symlink(scratch / "missing", scratch / "b/dangling.sites");

  DiagnosticList diagnostics;
  DirectoryWalk walk;
  walk.want_file = [](std::string_view name) { return name.ends_with(".sites"); };
  walk.skip_directory = [](const std::string& relative) { return relative == "skip" || relative == "elsewhere"; };
  std::vector<std::string> files;
  EXPECT_TRUE(walk_directory(scratch.path(), walk, files, diagnostics));
  EXPECT_EQ(files, (std::vector<std::string>{"a.sites", "b/a.sites", "b/linked.sites", "b/z.sites"}));

  walk.follow_file_links = false;
  files.clear();
  EXPECT_TRUE(walk_directory(scratch.path(), walk, files, diagnostics));
  EXPECT_EQ(files, (std::vector<std::string>{"a.sites", "b/a.sites", "b/z.sites"}));
  EXPECT_TRUE(diagnostics.items.empty());

  files.clear();
  EXPECT_FALSE(walk_directory(scratch / "missing", walk, files, diagnostics));
  ASSERT_EQ(diagnostics.items.size(), 1u);
  EXPECT_EQ(diagnostics.items[0].file, scratch / "missing");
  EXPECT_EQ(diagnostics.items[0].message, "cannot read directory: No such file or directory");
}

}  // namespace
}  // namespace sampler
