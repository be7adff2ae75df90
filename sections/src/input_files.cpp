// The files a user names (see sections/input_files.h).
#include "sections/input_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace sampler {
namespace {

const char* describe_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "an unknown kind of file";
}

}  // namespace

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::optional<InputFile> open_input(const std::string& path, AcceptedKinds accepted, DiagnosticSink& sink) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits until someone opens it for writing, which may be never.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    sink.error(DiagnosticCode::kCannotOpen, path, 0, std::string("cannot open: ") + std::strerror(errno));
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    sink.error(DiagnosticCode::kCannotOpen, path, 0, std::string("cannot read: ") + std::strerror(errno));
    return std::nullopt;
  }
  InputFile file;
  file.device = info.st_dev;
  file.inode = info.st_ino;
  if (S_ISREG(info.st_mode)) {
    file.kind = FileKind::kRegular;
    file.size = static_cast<uint64_t>(info.st_size);
  } else if (S_ISDIR(info.st_mode)) {
    file.kind = FileKind::kDirectory;
    if (!accepted.directory) {
      sink.error(DiagnosticCode::kIsDirectory, path, 0, "is a directory");
      return std::nullopt;
    }
  } else if ((S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode)) && accepted.pipe) {
    file.kind = FileKind::kPipe;
  } else {
    // A device never ends (/dev/zero) or waits for a person (a terminal): nothing would bound the reading.
    std::string expected = accepted.directory && accepted.pipe ? "not a regular file, directory or pipe"
                           : accepted.pipe                     ? "not a regular file or pipe"
                           : accepted.directory                ? "not a regular file or directory"
                                                               : "not a regular file";
    sink.error(DiagnosticCode::kNotRegularFile, path, 0, expected + " (" + describe_kind(info.st_mode) + ")");
    return std::nullopt;
  }
  // Reading waits for data again from here on (a pipe's writer may be slow); with no writer, a FIFO reads as empty.
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  file.fd = std::move(fd);
  return file;
}

bool read_to_end(int fd, const std::string& name, uint64_t limit, std::string& text, DiagnosticSink& sink) {
  char buffer[1 << 16];
  uint64_t total = 0;
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      sink.error(DiagnosticCode::kCannotOpen, name, 0, std::string("cannot read: ") + std::strerror(errno));
      return false;
    }
    if (got == 0) return true;
    total += static_cast<uint64_t>(got);
    if (total > limit) {
      sink.error(DiagnosticCode::kTooLarge, name, 0,
                 "more than " + std::to_string(limit) + " bytes: a FILE that is not a regular file is read whole, "
                 "up to that limit");
      return false;
    }
    text.append(buffer, static_cast<size_t>(got));
  }
}

bool walk_directory(const std::string& root, const DirectoryWalk& walk, std::vector<std::string>& files,
                    DiagnosticSink& sink) {
  namespace fs = std::filesystem;
  bool ok = true;
  std::vector<std::string> found;
  // By hand rather than with recursive_directory_iterator, so that an unreadable subdirectory is one error and the
  // walk goes on.
  std::vector<fs::path> pending{fs::path()};  // directories to read, relative to root
  const fs::path top(root);
  while (!pending.empty()) {
    fs::path directory = std::move(pending.back());
    pending.pop_back();
    const fs::path full = directory.empty() ? top : top / directory;
    std::error_code error;
    fs::directory_iterator it(full, error);
    for (; !error && it != fs::directory_iterator(); it.increment(error)) {
      const fs::path relative = directory / it->path().filename();
      std::error_code type_error;
      fs::file_status status = it->symlink_status(type_error);
      if (!type_error && fs::is_symlink(status)) {
        if (!walk.follow_file_links) continue;
        status = it->status(type_error);
        if (type_error || !fs::is_regular_file(status)) continue;  // dangling, or a directory: not followed
      }
      if (type_error) {
        sink.error(DiagnosticCode::kCannotOpen, it->path().string(), 0, "cannot stat: " + type_error.message());
        ok = false;
      } else if (fs::is_directory(status)) {
        if (!walk.skip_directory || !walk.skip_directory(relative.string())) pending.push_back(relative);
      } else if (fs::is_regular_file(status)) {
        if (!walk.want_file || walk.want_file(it->path().filename().native())) found.push_back(relative.string());
      }
    }
    if (error) {
      sink.error(DiagnosticCode::kCannotOpen, full.string(), 0, "cannot read directory: " + error.message());
      ok = false;
    }
  }
  std::sort(found.begin(), found.end());
  files.insert(files.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  return ok;
}

}  // namespace sampler
