// The unit registry and the report's normal life cycle: registration, dlclose, exit (see runtime_state.h).
// Writes go through one static buffer under the registry lock; SIGPIPE is held off while writing so that a
// report piped to a reader that has gone does not kill the program.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>

#include "atomic.h"
#include "crash_handler.h"
#include "plan.h"
#include "raw_syscall.h"
#include "runtime_state.h"
#include "sections/core/char_buffer.h"
#include "settings.h"

namespace sampler::runtime {

constinit ReportState g_report;

namespace {

char g_buffer[64 * 1024];
constinit ReportWriter g_writer(g_buffer, sizeof g_buffer, descriptor_sink(&g_report.fd));

/// The registry lock: a spin lock owned by a thread id, so the crash path can tell "held by me" (I crashed
/// while writing) from "held by another thread" (wait for it). False if the caller already holds it.
bool lock() {
  pid_t self = sys::gettid();
  for (;;) {
    pid_t expected = 0;
    if (compare_exchange(&g_report.lock_owner, expected, self)) return true;
    if (expected == self) return false;
    sys::sched_yield();
  }
}

void unlock() { store_release(&g_report.lock_owner, pid_t{0}); }

/// The report can be written by this process now.
bool report_is_open() {
  if (g_report.fd < 0 || g_report.finished || g_report.pid != sys::getpid()) return false;
  if (!destination_unchanged()) {
    // Closed or taken over by the program: the report ends here, unwritten (see destination_unchanged).
    store_release(&g_report.finished, 1);
    if (verbose()) say("the report's descriptor no longer refers to the report's file; no report");
    return false;
  }
  return true;
}

void open_samples_subreport(ReportWriter& out) {
  if (g_report.samples_open) return;
  out.append("<report id=\"samples\">");
  out.end_line();
  g_report.samples_open = 1;
}

void unlink(sampler_unit* unit) {
  sampler_unit* previous = nullptr;
  for (sampler_unit* u = g_report.head; u != nullptr; previous = u, u = u->next) {
    if (u != unit) continue;
    sampler_unit* next = u->next;
    if (previous == nullptr) {
      store_release(&g_report.head, next);
    } else {
      store_release(&previous->next, next);
    }
    if (g_report.tail == unit) g_report.tail = previous;
    break;
  }
  unit->next = nullptr;
  unit->state = kUnitUnregistered;
}

}  // namespace

void open_report(int fd, const char* path) {
  g_report.path = path;
  struct stat status {};
  if (fd >= 0 && sys::fstat(fd, &status) == 0) {
    g_report.device = status.st_dev;
    g_report.inode = status.st_ino;
  }
  g_report.fd = fd;
  g_report.pid = sys::getpid();
  g_report.writer = &g_writer;
}

void open_shared_counters(unsigned char* base, uint64_t size) {
  if (base == nullptr) return;
  SharedArea area{base, size};
  const char* problem = nullptr;
  if (!claim_shared_area(area, sys::getpid(), problem)) {
    say("SAMPLER_SHARED_FD: ", problem, "; no shared counters");
    munmap(base, size);
    return;
  }
  g_report.shared = area;
}

void detach_shared_counters() {
  SharedArea& area = g_report.shared;
  if (area.base == nullptr) return;
  // Only the forking thread exists in the child: nothing samples while the copy is made.
  void* copy = mmap(nullptr, area.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (copy != MAP_FAILED) {
    uint64_t used = load_relaxed(&reinterpret_cast<SharedHeader*>(area.base)->published);
    __builtin_memcpy(copy, area.base, used < area.size ? used : area.size);
    if (mremap(copy, area.size, area.size, MREMAP_MAYMOVE | MREMAP_FIXED, area.base) != MAP_FAILED) {
      area = SharedArea{};  // private memory now, at the same address: the child never reads it as shared
      return;
    }
    munmap(copy, area.size);
  }
  // No memory for a copy: the child must still never count into the parent's mapping. Its counters are then
  // of no use (a forked child writes no report): a private zero page over every one of them, at the same address.
  mmap(area.base, area.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  area = SharedArea{};
}

void register_unit(sampler_unit* unit) {
  if (unit == nullptr) return;
  const char* problem = check_unit(*unit);
  if (problem != nullptr) {
    char signature[33] = "(no signature)";
    if (unit->signature != nullptr) {
      size_t n = 0;
      while (n < 32 && unit->signature[n] != '\0') ++n;
      __builtin_memcpy(signature, unit->signature, n);
      signature[n] = '\0';
    }
    say("unit ", signature, ": ", problem, "; not registered");
    return;
  }
  if (!lock()) return;
  bool known = false;
  for (sampler_unit* u = g_report.head; u != nullptr; u = u->next) known = known || u == unit;
  if (!known) {
    apply_plan(*unit);
    unit->next = nullptr;
    unit->state = kUnitRegistered;
    // Published with release stores: the crash path walks the list without the lock.
    if (g_report.tail == nullptr) {
      store_release(&g_report.head, unit);
    } else {
      store_release(&g_report.tail->next, unit);
    }
    g_report.tail = unit;
    place_unit_in_shared_area(g_report.shared, *unit);
  }
  unlock();
  if (verbose() && !known) say("unit ", unit->signature, " registered");
}

void unregister_unit(sampler_unit* unit) {
  if (unit == nullptr || !lock()) return;
  bool known = false;
  for (sampler_unit* u = g_report.head; u != nullptr; u = u->next) known = known || u == unit;
  bool written = false;
  if (known && report_is_open()) {
    sys::SigpipeGuard guard;
    discard_interim_report();
    store_release(&unit->state, uintptr_t{kUnitWriting});
    open_samples_subreport(g_writer);
    write_unit(g_writer, *unit);
    g_writer.flush();
    raise_deferred_signal();
    written = true;
  }
  if (known) unlink(unit);
  unlock();
  if (verbose() && written) say("unit ", unit->signature, " unregistered: its samples are in the report");
  poll_interval();
}

namespace {

/// A crash on another thread is under way (its handler is writing the crash report, or waits for the registry
/// lock to do so): the crash wins over the exit. Lets go of the lock, so that the crash path writes the rest of
/// the report and its main-backtrace, and waits (bounded) for it to end the process with its signal. True if
/// the caller must leave the report alone from now on.
bool yield_to_crash() {
  if (!crash_under_way_elsewhere()) return false;
  unlock();
  wait_for_crash_to_end_process();
  return true;
}

}  // namespace

void finish_report() {
  if (!lock()) return;
  // A crash began first: its handler waits for this lock (or took it, wrote the samples and is writing the
  // main-backtrace while lock() waited).
  if (yield_to_crash()) return;
  if (!report_is_open()) {
    unlock();
    return;
  }
  bool ok;
  {
    sys::SigpipeGuard guard;
    discard_interim_report();
    open_samples_subreport(g_writer);
    // One flush per unit, so that a crash in the middle knows exactly which units are out.
    for (sampler_unit* u = g_report.head; u != nullptr; u = u->next) {
      store_release(&u->state, uintptr_t{kUnitWriting});
      write_unit(g_writer, *u);
      g_writer.flush();
      store_release(&u->state, uintptr_t{kUnitReported});
      raise_deferred_signal();
      if (yield_to_crash()) return;
    }
    g_writer.append("</report>");
    g_writer.end_line();
    write_plan_subreport(g_writer);
    ok = g_writer.flush();
    raise_deferred_signal();
  }
  // Sequentially consistent with the crash handler's taking of the crash (crash_handler_signal_safe.cpp): either
  // it sees the samples finished (and writes only its main-backtrace), or this sees the crash and does not close.
  __atomic_store_n(&g_report.finished, 1, __ATOMIC_SEQ_CST);
  if (yield_to_crash()) return;
  __atomic_store_n(&g_report.closed, 1, __ATOMIC_SEQ_CST);
  sys::close(g_report.fd);
  unlock();
  if (verbose()) {
    if (ok) {
      say("report written");
    } else {
      say("the report could not be written completely");
    }
  }
}

namespace {

constexpr long kMaxOffset = 0x7fffffffffffffffL;

/// The rest of an interim report after the stream's permanent part: every unit's sections, the end of the samples
/// subreport, the `interim` subreport.
void write_snapshot(ReportWriter& out, uint64_t sequence) {
  for (sampler_unit* u = g_report.head; u != nullptr; u = u->next) write_unit(out, *u);
  out.append("</report>");
  out.end_line();
  write_plan_subreport(out);
  out.append("<report id=\"interim\">");
  out.end_line();
  out.append("sequence\t");
  out.append_decimal(sequence);
  out.end_line();
  out.append("</report>");
  out.end_line();
}

/// The interim report written beside the report's file (under the registry lock).
char g_aside_buffer[16 * 1024];
constexpr char kAsideSuffix[] = ".new";
char g_aside_name[4096 + sizeof kAsideSuffix];

/// Opens NAME.new for a report written aside, by the rules of the report file itself (settings.h): not through
/// a symbolic link, the user's own, a regular file of one name, locked by this process, emptied. -1 if it cannot.
/// A NAME.new left by a process killed while writing one is taken over.
int open_aside(const char* name) {
  long fd = sys::call(SYS_openat, AT_FDCWD, reinterpret_cast<long>(name),
                      O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  struct stat status {};
  if (sys::fstat(static_cast<int>(fd), &status) != 0 || !S_ISREG(status.st_mode) ||
      status.st_uid != static_cast<uid_t>(sys::call(SYS_geteuid)) || status.st_nlink != 1 ||
      sys::call(SYS_flock, fd, LOCK_EX | LOCK_NB) != 0 || sys::ftruncate(static_cast<int>(fd), 0) != 0) {
    sys::close(static_cast<int>(fd));
    return -1;
  }
  return static_cast<int>(fd);
}

/// Copies the first `size` bytes of `from` (read from its start) to `to`.
bool copy_prefix(int from, int to, long size) {
  while (size > 0) {
    long chunk = size < static_cast<long>(sizeof g_aside_buffer) ? size : static_cast<long>(sizeof g_aside_buffer);
    long got = sys::read(from, g_aside_buffer, static_cast<size_t>(chunk));
    if (got == -EINTR) continue;
    if (got <= 0 || !sys::write_all(to, g_aside_buffer, static_cast<size_t>(got))) return false;
    size -= got;
  }
  return true;
}

/// Replaces the file named by SAMPLER_FILE with a new one: the stream's permanent part (its first `base` bytes)
/// and the snapshot, written to NAME.new and renamed over NAME; the report's descriptor then refers to the new
/// file, and the snapshot in it is taken back before the stream goes on (discard_interim_report), as in place.
/// False, with nothing changed but a NAME.new removed, when it cannot (the name no longer refers to the report's
/// file, NAME.new cannot be made, a write fails): the caller then writes the snapshot in place.
bool replace_report_file(long base, uint64_t sequence) {
  const char* name = g_report.path;
  size_t length = __builtin_strlen(name);
  if (length + sizeof kAsideSuffix > sizeof g_aside_name) return false;
  __builtin_memcpy(g_aside_name, name, length);
  __builtin_memcpy(g_aside_name + length, kAsideSuffix, sizeof kAsideSuffix);
  // The permanent part is read through the name, O_WRONLY as the report's descriptor is: which also makes sure the
  // name still refers to the report's file (a program may have moved it away: then it is not replaced).
  long source = sys::call(SYS_openat, AT_FDCWD, reinterpret_cast<long>(name), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (source < 0) return false;
  struct stat status {};
  if (sys::fstat(static_cast<int>(source), &status) != 0 || status.st_dev != g_report.device ||
      status.st_ino != g_report.inode) {
    sys::close(static_cast<int>(source));
    return false;
  }
  int aside = open_aside(g_aside_name);
  if (aside < 0) {
    sys::close(static_cast<int>(source));
    return false;
  }
  bool written = copy_prefix(static_cast<int>(source), aside, base);
  sys::close(static_cast<int>(source));
  ReportWriter out(g_aside_buffer, sizeof g_aside_buffer, descriptor_sink(&aside));
  if (written) {
    write_snapshot(out, sequence);
    written = out.flush();
  }
  long end = sys::lseek(aside, 0, 1 /* SEEK_CUR */);
  if (!written || end < base || sys::fstat(aside, &status) != 0) {
    sys::call(SYS_unlinkat, AT_FDCWD, reinterpret_cast<long>(g_aside_name), 0);
    sys::close(aside);
    return false;
  }
  // Signals held from the rename until the descriptor and its bookkeeping follow: a SIGTERM in between would
  // have the crash path write into the file the name has just left.
  uint64_t all = ~uint64_t{0}, old = 0;
  sys::call(SYS_rt_sigprocmask, 0 /* SIG_BLOCK */, reinterpret_cast<long>(&all), reinterpret_cast<long>(&old), 8);
  // renameat2 with no flags: AArch64 has no plain renameat. A kernel without it (before 3.15) gets in-place reports.
  bool renamed = sys::call6(SYS_renameat2, AT_FDCWD, reinterpret_cast<long>(g_aside_name), AT_FDCWD,
                            reinterpret_cast<long>(name), 0, 0) == 0;
  if (renamed) {
    // The new file takes the report's descriptor number (the old file, now nameless, is closed with it): the
    // stream's permanent part is there too, with the snapshot past it.
    sys::call(SYS_dup3, aside, g_report.fd, O_CLOEXEC);
    g_report.device = status.st_dev;
    g_report.inode = status.st_ino;
    g_report.interim_base = base;
    g_report.interim_end = end;
    store_release(&g_report.interim_written, 1);
    g_report.interim_sequence = sequence;
  } else {
    sys::call(SYS_unlinkat, AT_FDCWD, reinterpret_cast<long>(g_aside_name), 0);
  }
  sys::call(SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, reinterpret_cast<long>(&old), 0, 8);
  sys::close(aside);
  return renamed;
}

/// Writes the snapshot into the destination itself, past the stream's permanent part (a memfd, a file given as
/// SAMPLER_REPORT_FD): a reader sees it grow, a kill in the middle leaves it cut short.
bool write_interim_report_in_place(uint64_t sequence) {
  discard_interim_report();
  open_samples_subreport(g_writer);
  g_writer.flush();
  long base = sys::lseek(g_report.fd, 0, 1 /* SEEK_CUR */);
  if (base < 0 || g_writer.failed()) return false;
  g_report.interim_base = base;
  // Until the interim report is out, whatever reaches the file is its text (see discard_interim_report).
  g_report.interim_end = kMaxOffset;
  // Set before the first byte: a crash in the middle takes back what is out.
  store_release(&g_report.interim_written, 1);
  g_report.interim_sequence = sequence;
  write_snapshot(g_writer, sequence);
  bool written = g_writer.flush();
  g_report.interim_end = sys::lseek(g_report.fd, 0, 1 /* SEEK_CUR */);
  return written;
}

}  // namespace

void write_interim_report() {
  if (!lock()) return;
  if (yield_to_crash()) return;
  if (!report_is_open()) {
    unlock();
    return;
  }
  struct stat status {};
  bool regular = sys::fstat(g_report.fd, &status) == 0 && S_ISREG(status.st_mode);
  bool written = false, replaced = false;
  uint64_t sequence = g_report.interim_sequence + 1;
  if (regular) {
    sys::SigpipeGuard guard;
    // By its name when it has one, and the last interim report (if any) is still where it was written.
    if (g_report.path != nullptr &&
        (!load_relaxed(&g_report.interim_written) || status.st_size <= g_report.interim_end)) {
      long base = g_report.interim_base;
      if (!load_relaxed(&g_report.interim_written)) {
        open_samples_subreport(g_writer);
        g_writer.flush();
        base = g_writer.failed() ? -1 : sys::lseek(g_report.fd, 0, 1 /* SEEK_CUR */);
      }
      replaced = base >= 0 && replace_report_file(base, sequence);
      if (!replaced && verbose()) say("cannot write the interim report beside the report file: writing it in place");
    }
    written = replaced || write_interim_report_in_place(sequence);
    raise_deferred_signal();
  }
  unlock();
  if (verbose()) {
    char number[24];
    CharBuffer text(number, sizeof number - 1);
    text.append_decimal(sequence);
    number[text.size()] = '\0';
    if (!regular) {
      say("no interim report: the destination is not a regular file");
    } else if (written) {
      say("interim report ", number, replaced ? " written (the report file replaced)" : " written in place");
    } else {
      say("interim report ", number, " could not be written completely");
    }
  }
}

uint64_t g_interim_due = 0;

namespace {

uint64_t g_interval_nanoseconds = 0;

uint64_t coarse_now() {
  struct timespec now {};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace

void start_interval(uint32_t seconds) {
  struct stat status {};
  if (sys::fstat(g_report.fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    if (verbose()) say("SAMPLER_INTERVAL ignored: the report's destination is not a regular file");
    return;
  }
  g_interval_nanoseconds = uint64_t{seconds} * 1000000000u;
  store_relaxed(&g_interim_due, coarse_now() + g_interval_nanoseconds);
}

void write_interim_report_if_due() {
  uint64_t due = load_relaxed(&g_interim_due);
  uint64_t now = coarse_now();
  if (due == 0 || now < due) return;
  // One thread takes each due report; the others go on sampling. The next is due an interval from now, not from
  // `due`: a program that sampled nothing for an hour gets one report, not every one it missed.
  if (!compare_exchange(&g_interim_due, due, now + g_interval_nanoseconds)) return;
  write_interim_report();
  // The report ended (or this is a forked child): nothing will be written any more, the check costs nothing again.
  if (load_acquire(&g_report.finished) || g_report.pid != sys::getpid()) store_relaxed(&g_interim_due, uint64_t{0});
}

void write_samples_subreport(Sink sink) {
  char buffer[16 * 1024];
  ReportWriter out(buffer, sizeof buffer, sink);
  if (!lock()) return;
  out.append("<report id=\"samples\">");
  out.end_line();
  for (sampler_unit* u = g_report.head; u != nullptr; u = u->next) write_unit(out, *u);
  out.append("</report>");
  out.end_line();
  out.flush();
  unlock();
}

}  // namespace sampler::runtime
