// The unit registry and the report's normal life cycle: registration, dlclose, exit (see runtime_state.h).
// Writes go through one static buffer under the registry lock; SIGPIPE is held off while writing so that a
// report piped to a reader that has gone does not kill the program.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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

/// The normal writer's sink: the report's descriptor, but nothing once a crash has finished the report, so that a
/// flush the crash interrupted never follows the crash's report with text of its own.
bool write_unless_finished(void* context, const char* data, size_t size) {
  return !crash_finished_report() && write_to_descriptor(context, data, size);
}

char g_buffer[64 * 1024];
constinit ReportWriter g_writer(g_buffer, sizeof g_buffer, Sink{&g_report.fd, write_unless_finished});

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

void open_shared_counters(unsigned char* base, uint64_t size, const char* counters_path, int counters_fd) {
  if (base == nullptr) return;
  SharedArea area{base, size};
  const char* problem = nullptr;
  if (!claim_shared_area(area, sys::getpid(), problem)) {
    say(counters_path != nullptr ? "SAMPLER_FILE: " : "SAMPLER_SHARED_FD: ", problem, "; no shared counters");
    munmap(base, size);
    if (counters_fd >= 0) sys::close(counters_fd);
    return;
  }
  g_report.shared = area;
  g_report.counters_path = counters_path;
  g_report.counters_fd = counters_fd;
}

void remove_counters_file() {
  if (g_report.counters_path == nullptr || g_report.shared.base == nullptr) return;
  // The name may have been given to another file since (the user moved ours away): only ours is removed.
  struct stat ours {}, named {};
  if (sys::fstat(g_report.counters_fd, &ours) == 0 && stat(g_report.counters_path, &named) == 0 &&
      ours.st_dev == named.st_dev && ours.st_ino == named.st_ino) {
    ::unlink(g_report.counters_path);
  }
  g_report.counters_path = nullptr;
}

void detach_shared_counters() {
  SharedArea& area = g_report.shared;
  if (area.base == nullptr) return;
  if (g_report.counters_fd >= 0) sys::close(g_report.counters_fd);
  g_report.counters_fd = -1;
  g_report.counters_path = nullptr;
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
    // Over an interim report, beside the file and renamed over it with a new interim report of the other units: a
    // kill while writing leaves the last one. The unit is still registered meanwhile: a crash on this thread writes
    // it in place, into the file the name still holds.
    if (!write_report_aside(g_writer, g_report.interim_sequence + 1, unit) && !crash_finished_report()) {
      discard_interim_report();
      store_release(&unit->state, uintptr_t{kUnitWriting});
      open_samples_subreport(g_writer);
      write_unit(g_writer, *unit);
      g_writer.flush();
    }
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

/// The report is a crash's: one under way on another thread (yield_to_crash), or one that finished it while this
/// thread was writing. Lets go of the lock then; true if the caller must leave the report alone.
bool report_left_to_crash() {
  if (yield_to_crash()) return true;
  if (!crash_finished_report()) return false;
  unlock();
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
  bool ok, replaced;
  {
    sys::SigpipeGuard guard;
    // Over an interim report, beside the file and renamed over it: a kill while writing leaves the interim report.
    replaced = ok = write_report_aside(g_writer, kFinalReport);
    if (!replaced) {
      if (report_left_to_crash()) return;  // the aside report was left to a crash
      discard_interim_report();
      open_samples_subreport(g_writer);
      // One flush per unit, so that a crash in the middle knows exactly which units are out.
      for (sampler_unit* u = g_report.head; u != nullptr; u = u->next) {
        store_release(&u->state, uintptr_t{kUnitWriting});
        write_unit(g_writer, *u);
        g_writer.flush();
        store_release(&u->state, uintptr_t{kUnitReported});
        raise_deferred_signal();
        if (report_left_to_crash()) return;
      }
      g_writer.append("</report>");
      g_writer.end_line();
      write_plan_subreport(g_writer);
      ok = g_writer.flush();
    }
    raise_deferred_signal();
  }
  // Sequentially consistent with the crash handler's taking of the crash (crash_handler_signal_safe.cpp): either
  // it sees the samples finished (and writes only its main-backtrace), or this sees the crash and does not close.
  __atomic_store_n(&g_report.finished, 1, __ATOMIC_SEQ_CST);
  if (yield_to_crash()) return;
  // Before the report's descriptor (and its lock) goes: the next run of the same name makes its own counters file.
  if (ok) remove_counters_file();
  __atomic_store_n(&g_report.closed, 1, __ATOMIC_SEQ_CST);
  sys::close(g_report.fd);
  unlock();
  if (verbose()) {
    if (ok) {
      say(replaced ? "report written (the report file replaced)" : "report written");
    } else {
      say("the report could not be written completely");
    }
  }
}

namespace {

constexpr long kMaxOffset = 0x7fffffffffffffffL;

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
    replaced = write_report_aside(g_writer, sequence);
    if (!replaced && g_report.path != nullptr && verbose()) {
      say("cannot write the interim report beside the report file: writing it in place");
    }
    written = replaced || (!crash_finished_report() && write_interim_report_in_place(sequence));
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
