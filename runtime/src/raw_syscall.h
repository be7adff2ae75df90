// Raw Linux system calls for the runtime's signal-safe paths (crash handler, report writing, module map).
//
// Inline assembly on x86-64 and AArch64 (no errno, no PLT, nothing a sanitizer or LD_PRELOAD library can
// interpose), libc's syscall() elsewhere. Each returns the kernel's result: >= 0 on success, -errno on failure.
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#include <unistd.h>
#endif

namespace sampler::sys {

#if defined(__x86_64__)
inline long call6(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  long result;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}
#elif defined(__aarch64__)
inline long call6(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  register long x8 __asm__("x8") = number;
  register long x0 __asm__("x0") = a1;
  register long x1 __asm__("x1") = a2;
  register long x2 __asm__("x2") = a3;
  register long x3 __asm__("x3") = a4;
  register long x4 __asm__("x4") = a5;
  register long x5 __asm__("x5") = a6;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
}
#else
inline long call6(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  int saved = errno;
  long result = syscall(number, a1, a2, a3, a4, a5, a6);
  if (result == -1) result = -errno;
  errno = saved;
  return result;
}
#endif

inline long call(long number, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0) {
  return call6(number, a1, a2, a3, a4, 0, 0);
}

inline long write(int fd, const void* data, size_t size) {
  return call(SYS_write, fd, reinterpret_cast<long>(data), static_cast<long>(size));
}
inline long read(int fd, void* data, size_t size) {
  return call(SYS_read, fd, reinterpret_cast<long>(data), static_cast<long>(size));
}
inline long open_read_only(const char* path) {
  // O_RDONLY | O_CLOEXEC, relative to AT_FDCWD (-100).
  return call(SYS_openat, -100, reinterpret_cast<long>(path), 02000000, 0);
}
inline long close(int fd) { return call(SYS_close, fd); }
inline long ftruncate(int fd, long length) { return call(SYS_ftruncate, fd, length); }
/// whence: 0 SEEK_SET, 1 SEEK_CUR.
inline long lseek(int fd, long offset, int whence) { return call(SYS_lseek, fd, offset, whence); }
inline long fstat(int fd, struct stat* status) { return call(SYS_fstat, fd, reinterpret_cast<long>(status)); }
inline pid_t getpid() { return static_cast<pid_t>(call(SYS_getpid)); }
inline pid_t gettid() { return static_cast<pid_t>(call(SYS_gettid)); }
inline long tgkill(pid_t pid, pid_t tid, int signal) { return call(SYS_tgkill, pid, tid, signal); }
inline long sched_yield() { return call(SYS_sched_yield); }
/// Sleeps for `nanoseconds` (< 1 s).
inline long nanosleep(long nanoseconds) {
  struct {
    long seconds;
    long nanoseconds;
  } duration{0, nanoseconds};
  return call(SYS_nanosleep, reinterpret_cast<long>(&duration), 0);
}

/// Waits until `fd` can take more bytes, at most `nanoseconds` (< 1 s). False if the wait itself failed.
inline bool wait_writable(int fd, long nanoseconds) {
  struct {
    int fd;
    short events;
    short revents;
  } poll_fd{fd, 4 /* POLLOUT */, 0};
  struct {
    long seconds;
    long nanoseconds;
  } timeout{0, nanoseconds};
  long result = call6(SYS_ppoll, reinterpret_cast<long>(&poll_fd), 1, reinterpret_cast<long>(&timeout), 0, 8, 0);
  return result >= 0 || result == -EINTR;
}

/// How long write_all() waits for a non-blocking descriptor to take bytes again: 100 waits of at most 100 ms
/// each without any progress (10 s), then the write fails.
constexpr int kMaxWritableWaits = 100;
constexpr long kWritableWaitNanoseconds = 100000000;

/// Writes all of `data`, retrying after EINTR and partial writes, and waiting (bounded: kMaxWritableWaits) while a
/// non-blocking descriptor is full (EAGAIN). False on any other failure.
inline bool write_all(int fd, const char* data, size_t size) {
  int waits = 0;
  while (size > 0) {
    long written = write(fd, data, size);
    if (written == -EINTR) continue;
    if (written == -EAGAIN) {
      if (++waits > kMaxWritableWaits || !wait_writable(fd, kWritableWaitNanoseconds)) return false;
      continue;
    }
    if (written <= 0) return false;
    waits = 0;
    data += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

}  // namespace sampler::sys

namespace sampler::sys {

/// Keeps a write to a pipe whose reader has gone from killing the program with SIGPIPE: blocks SIGPIPE for the
/// calling thread while alive, then discards a SIGPIPE the writes raised (one that was pending before stays).
/// Raw system calls only: usable in the crash handler.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    uint64_t block = kBit;
    call(SYS_rt_sigprocmask, 0 /* SIG_BLOCK */, reinterpret_cast<long>(&block), reinterpret_cast<long>(&old_), 8);
    uint64_t pending = 0;
    call(SYS_rt_sigpending, reinterpret_cast<long>(&pending), 8);
    was_pending_ = (pending & kBit) != 0;
  }
  ~SigpipeGuard() {
    if (!was_pending_) {
      uint64_t set = kBit;
      long zero[2] = {0, 0};
      call(SYS_rt_sigtimedwait, reinterpret_cast<long>(&set), 0, reinterpret_cast<long>(zero), 8);
    }
    call(SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, reinterpret_cast<long>(&old_), 0, 8);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  static constexpr uint64_t kBit = uint64_t{1} << (13 - 1);  // SIGPIPE is 13 on Linux
  uint64_t old_ = 0;
  bool was_pending_ = false;
};

}  // namespace sampler::sys
