// The files a user names on a command line (docs/tools.md, FILE arguments): opening them, reading one whole with
// a bound, and walking the directories among them. The one implementation the formats library and the tools share.
//
// A FILE may name anything: a FIFO nobody writes to (a plain open() for reading would wait for a writer forever),
// a device that never ends (/dev/zero), a directory. open_input() opens without waiting and says what the file is,
// so that each caller takes the kinds it can read with a bound and refuses the others at once.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sections/diagnostics.h"

namespace sampler {

/// A file descriptor, closed when the object goes.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  /// Gives up ownership: the descriptor is returned and no longer closed here.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  /// Closes the descriptor held, if any, and holds `fd`.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

/// What an opened file is.
enum class FileKind : uint8_t {
  kRegular,
  kDirectory,
  kPipe,    ///< a FIFO or a socket: read to its end, which its writer decides (a process substitution, /dev/stdin)
  kDevice,  ///< a character or block device: /dev/zero never ends, a terminal waits for a person
};

/// The kinds a caller can read besides regular files.
struct AcceptedKinds {
  bool directory = false;
  bool pipe = false;
};

/// An opened FILE.
struct InputFile {
  UniqueFd fd;
  FileKind kind = FileKind::kRegular;
  uint64_t size = 0;    ///< regular files: the size when opened
  dev_t device = 0;     ///< with `inode`, the file's identity (the same file under two names)
  ino_t inode = 0;
};

/// Opens `path` for reading without waiting for a FIFO's writer (a FIFO that has none then reads as empty), and
/// checks its kind against `accepted` before anything is read. Problems are reported to `sink` naming `path`, with
/// a code: the open failing (kCannotOpen, "cannot open: REASON"), a directory not accepted (kIsDirectory), any
/// other kind not accepted (kNotRegularFile, "not a regular file (a FIFO)", naming what it is). Devices are never
/// accepted: nothing bounds them. The descriptor is blocking, close-on-exec, positioned at the start.
std::optional<InputFile> open_input(const std::string& path, AcceptedKinds accepted, DiagnosticSink& sink);

/// The most bytes read_to_end() takes from a pipe given as a FILE (1 GiB): a FILE that is not a regular file has no
/// size to check up front, so the bound is this.
inline constexpr uint64_t kMaxPipedFileSize = uint64_t{1} << 30;

/// Reads `fd` to its end into `text` (appended), at most `limit` bytes. On a read error or when more than `limit`
/// bytes come, reports it to `sink` naming `name` (kCannotOpen "cannot read: REASON", or kTooLarge) and returns
/// false; `text` then holds what was read.
bool read_to_end(int fd, const std::string& name, uint64_t limit, std::string& text, DiagnosticSink& sink);

/// How walk_directory() walks a tree.
struct DirectoryWalk {
  /// Symbolic links to regular files are listed (a samplerinfo tree may link its .sites files); when false, every
  /// symbolic link is left out. Symbolic links to directories are never followed (no loops, no escaping the tree).
  bool follow_file_links = true;
  /// Directories not to descend into, by their path relative to the root ("usr/lib/debug"); nullptr: none.
  std::function<bool(const std::string& relative)> skip_directory;
  /// Regular files to list, by their name ("app.sites"); nullptr: all of them.
  std::function<bool(std::string_view name)> want_file;
};

/// Appends to `files` the regular files under the directory `root` (paths relative to it, "usr/bin/app.sites"),
/// sorted. An unreadable directory, or an entry whose type cannot be told, is one error naming it (kCannotOpen);
/// the walk goes on without it. Returns false if an error was reported.
bool walk_directory(const std::string& root, const DirectoryWalk& walk, std::vector<std::string>& files,
                    DiagnosticSink& sink);

}  // namespace sampler
