#include "private_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sampler::launcher {
namespace {

// Only the effective user can change what is in it: owned by that user, writable by no one else.
bool only_user_can_write(const struct stat& st, std::string& why, const std::string& path) {
  if (st.st_uid != geteuid()) {
    why = "'" + path + "' belongs to another user";
    return false;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    why = "'" + path + "' is writable by others";
    return false;
  }
  return true;
}

// A base directory that is missing is usable when only the user could create it: its parent is the user's.
bool usable_base(const char* value, std::string& why) {
  if (value == nullptr || *value != '/') return false;
  std::string path = value;
  struct stat st{};
  if (stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    path = std::filesystem::path(path).lexically_normal().parent_path().string();
    if (stat(path.c_str(), &st) != 0) st.st_mode = 0;
  }
  if (!S_ISDIR(st.st_mode)) {
    why = "'" + path + "' is not a directory";
    return false;
  }
  return only_user_can_write(st, why, path);
}

}  // namespace

std::string user_base_dir(const char* xdg_variable, const char* under_home, std::string& why) {
  why.clear();
  if (const char* xdg = std::getenv(xdg_variable); xdg != nullptr && *xdg != '\0') {
    if (usable_base(xdg, why)) return xdg;
    if (why.empty()) why = std::string(xdg_variable) + " is not an absolute path";
  }
  std::string home_why;
  const char* home = std::getenv("HOME");
  if (usable_base(home, home_why)) return std::string(home) + "/" + under_home;
  if (!why.empty()) why += "; ";
  why += home == nullptr || *home == '\0' ? "HOME is not set"
         : home_why.empty()               ? "HOME is not an absolute path"
                                          : "HOME: " + home_why;
  return {};
}

bool make_private_dir(const std::string& dir, std::string& why) {
  struct stat st{};
  if (lstat(dir.c_str(), &st) != 0) {
    std::filesystem::path partial;
    for (const std::filesystem::path& part : std::filesystem::path(dir)) {
      partial /= part;
      if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
        why = "cannot create '" + partial.string() + "': " + std::strerror(errno);
        return false;
      }
    }
    if (lstat(dir.c_str(), &st) != 0) {
      why = "cannot create '" + dir + "': " + std::strerror(errno);
      return false;
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    why = "'" + dir + "' is not a directory" + (S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
    return false;
  }
  return only_user_can_write(st, why, dir);
}

bool read_private_file(const std::string& path, size_t max_bytes, std::string& bytes, std::string& why,
                       bool* missing) {
  bytes.clear();
  if (missing != nullptr) *missing = false;
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (missing != nullptr) *missing = errno == ENOENT;
    why = "cannot open '" + path + "': " + (errno == ELOOP ? "a symbolic link" : std::strerror(errno));
    return false;
  }
  struct stat st{};
  bool ok = fstat(fd, &st) == 0;
  if (ok && !S_ISREG(st.st_mode)) {
    why = "'" + path + "' is not a regular file";
    ok = false;
  }
  ok = ok && only_user_can_write(st, why, path);
  if (ok) flock(fd, LOCK_SH);  // a writer holding LOCK_EX (sampler-run's "last") finishes first
  char buffer[65536];
  while (ok && bytes.size() < max_bytes) {
    ssize_t n = read(fd, buffer, std::min(sizeof buffer, max_bytes - bytes.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = "cannot read '" + path + "': " + std::strerror(errno);
      ok = false;
    }
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (!ok) bytes.clear();
  return ok;
}

int open_private_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  struct stat st{};
  std::string ignored;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !only_user_can_write(st, ignored, path)) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string hashed_file_name(std::string_view key) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : key) hash = (hash ^ c) * 0x100000001b3ull;
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(hash));
  return name;
}

bool write_private_file(const std::string& path, std::string_view bytes) {
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST && unlink(temporary.c_str()) == 0) {  // left by a launcher that died here
    fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  if (fd < 0) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bool ok = close(fd) == 0 && done == bytes.size() && rename(temporary.c_str(), path.c_str()) == 0;
  if (!ok) unlink(temporary.c_str());
  return ok;
}

}  // namespace sampler::launcher
