// Reports written whole beside the report file and renamed over it (see runtime_state.h, write_report_aside): the
// interim reports, and the final one from the exit-time writer and from the crash path. Signal-safe: raw system
// calls and static buffers, the registry lock holder's, and a crash's own for a crash without the lock.
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>

#include "atomic.h"
#include "crash_handler.h"
#include "plan.h"
#include "raw_syscall.h"
#include "runtime_state.h"

namespace sampler::runtime {

void open_samples_subreport(ReportWriter& out) {
  if (g_report.samples_open) return;
  out.append("<report id=\"samples\">");
  out.end_line();
  g_report.samples_open = 1;
}

void write_snapshot(ReportWriter& out, uint64_t sequence, const sampler_unit* leaving) {
  size_t visited = 0;
  for (sampler_unit* u = load_acquire(&g_report.head); u != nullptr && visited < kMaxUnits;
       u = load_acquire(&u->next), ++visited) {
    if (u != leaving && load_acquire(&u->state) == kUnitRegistered) write_unit(out, *u);
  }
  out.append("</report>");
  out.end_line();
  write_plan_subreport(out);
  if (sequence == kFinalReport) return;
  out.append("<report id=\"interim\">");
  out.end_line();
  out.append("sequence\t");
  out.append_decimal(sequence);
  out.end_line();
  out.append("</report>");
  out.end_line();
}

namespace {

/// Where a report written aside is made: the buffer it is copied and written through, the name of the file beside
/// the report's (the report file's name and the suffix).
struct AsideSpace {
  const char* suffix;
  char buffer[16 * 1024];
  char name[PATH_MAX + sizeof ".crash"];  // the longest path the kernel takes, and the longest suffix
};

/// The registry lock holder's: interim reports, a leaving unit, the final report at exit or from a crash that took
/// the lock.
constinit AsideSpace g_aside{".new", {}, {}};
/// A crash's that could not take the lock (it interrupted a writer on its own thread, or another thread kept the
/// lock past the wait): that writer may be using g_aside, and its NAME.new is open and locked.
constinit AsideSpace g_crash_aside{".crash", {}, {}};

/// Makes space.name NAME + suffix for the report file NAME; false if it does not fit.
bool name_aside(AsideSpace& space, const char* name) {
  size_t length = __builtin_strlen(name), suffix = __builtin_strlen(space.suffix) + 1;
  if (length + suffix > sizeof space.name) return false;
  __builtin_memcpy(space.name, name, length);
  __builtin_memcpy(space.name + length, space.suffix, suffix);
  return true;
}

/// Opens the file beside the report's (NAME.new, NAME.crash) for a report written aside, by the rules of the report
/// file itself (settings.h): not through a symbolic link, the user's own, a regular file of one name, locked by this
/// process, emptied. -1 if it cannot. One left by a process killed while writing it is taken over.
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

/// Copies the first `size` bytes of `from` (read from its start) to `to`, through the space's buffer.
bool copy_prefix(int from, int to, long size, AsideSpace& space) {
  while (size > 0) {
    long chunk = size < static_cast<long>(sizeof space.buffer) ? size : static_cast<long>(sizeof space.buffer);
    long got = sys::read(from, space.buffer, static_cast<size_t>(chunk));
    if (got == -EINTR) continue;
    if (got <= 0 || !sys::write_all(to, space.buffer, static_cast<size_t>(got))) return false;
    size -= got;
  }
  return true;
}

/// Replaces the file named by SAMPLER_FILE with a new one: the stream's permanent part (its first `base` bytes,
/// then the sections of the unit `leaving`, if any, which join it) and the snapshot, written beside it through
/// `space` (NAME.new, NAME.crash) and renamed over NAME; the report's descriptor then refers to the new file. An
/// interim report in it is taken back before the stream goes on (discard_interim_report), as in place; after the
/// final one the samples subreport is finished. False, with nothing changed but the file beside removed, when it
/// cannot (the name no longer refers to the report's file, the file beside cannot be made, a write fails; for the
/// final report, a crash under way on another thread, which writes the report itself) or must not (a crash has
/// finished the report meanwhile: docs/decisions.md, "A writer resumed after a crash").
bool replace_report_file(AsideSpace& space, long base, uint64_t sequence, sampler_unit* leaving) {
  const char* name = g_report.path;
  if (!name_aside(space, name)) return false;
  const char* aside_name = space.name;
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
  int aside = open_aside(aside_name);
  if (aside < 0) {
    sys::close(static_cast<int>(source));
    return false;
  }
  bool written = copy_prefix(static_cast<int>(source), aside, base, space);
  sys::close(static_cast<int>(source));
  ReportWriter out(space.buffer, sizeof space.buffer, descriptor_sink(&aside));
  long permanent = base;  // where the permanent part ends in the new file
  if (written && leaving != nullptr) {
    write_unit(out, *leaving);
    written = out.flush();
    permanent = sys::lseek(aside, 0, 1 /* SEEK_CUR */);
  }
  if (written) {
    write_snapshot(out, sequence, leaving);
    written = out.flush();
  }
  long end = sys::lseek(aside, 0, 1 /* SEEK_CUR */);
  // A crash on another thread waits for the registry lock to write the rest of the report into the file the name
  // holds: the final report is then left to it (the caller yields to it).
  const bool final_report = sequence == kFinalReport;
  if (!written || permanent < base || end < permanent || sys::fstat(aside, &status) != 0 ||
      (final_report && crash_under_way_elsewhere())) {
    sys::call(SYS_unlinkat, AT_FDCWD, reinterpret_cast<long>(aside_name), 0);
    sys::close(aside);
    return false;
  }
  // Signals held from the rename until the descriptor and its bookkeeping follow: a SIGTERM in between would
  // have the crash path write into the file the name has just left, or (the final report) write the samples again.
  uint64_t all = ~uint64_t{0}, old = 0;
  sys::call(SYS_rt_sigprocmask, 0 /* SIG_BLOCK */, reinterpret_cast<long>(&all), reinterpret_cast<long>(&old), 8);
  // A crash that interrupted this writer on its thread, and whose signal the program's own handler survived, has
  // renamed the final report in: it stays (checked with signals held, so no crash comes between this and the rename).
  // renameat2 with no flags: AArch64 has no plain renameat. A kernel without it (before 3.15) gets in-place reports.
  bool renamed = !crash_finished_report() &&
                 sys::call6(SYS_renameat2, AT_FDCWD, reinterpret_cast<long>(aside_name), AT_FDCWD,
                            reinterpret_cast<long>(name), 0, 0) == 0;
  if (renamed) {
    // The new file takes the report's descriptor number (the old file, now nameless, is closed with it): the
    // stream's permanent part is there too, with the snapshot past it.
    sys::call(SYS_dup3, aside, g_report.fd, O_CLOEXEC);
    g_report.device = status.st_dev;
    g_report.inode = status.st_ino;
    if (final_report) {
      store_release(&g_report.interim_written, 0);  // nothing to take back: the report is whole
      // Sequentially consistent, as finish_report's own store (report.cpp): a crash from now on writes only its
      // main-backtrace, after the samples.
      __atomic_store_n(&g_report.finished, 1, __ATOMIC_SEQ_CST);
    } else {
      // The leaving unit's sections are in the permanent part now: a crash must not write them again.
      if (leaving != nullptr) store_release(&leaving->state, uintptr_t{kUnitReported});
      g_report.interim_base = permanent;
      g_report.interim_end = end;
      store_release(&g_report.interim_written, 1);
      g_report.interim_sequence = sequence;
    }
  } else {
    sys::call(SYS_unlinkat, AT_FDCWD, reinterpret_cast<long>(aside_name), 0);
  }
  sys::call(SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, reinterpret_cast<long>(&old), 0, 8);
  sys::close(aside);
  return renamed;
}

/// Where the stream's permanent part ends when the report file (`status`, the report's descriptor's) holds a whole
/// interim report that nothing was written after, else -1.
long interim_base_if_last(const struct stat& status) {
  if (g_report.path == nullptr || !load_acquire(&g_report.interim_written) || !S_ISREG(status.st_mode)) return -1;
  // Someone wrote into the file after the interim report: it is no longer the last thing there.
  if (status.st_size > g_report.interim_end) return -1;
  return g_report.interim_base;
}

}  // namespace

bool write_report_aside(ReportWriter& stream, uint64_t sequence, sampler_unit* leaving) {
  if (g_report.path == nullptr) return false;
  struct stat status {};
  if (sys::fstat(g_report.fd, &status) != 0 || !S_ISREG(status.st_mode)) return false;
  long base = interim_base_if_last(status);
  if (load_acquire(&g_report.interim_written)) {
    if (base < 0) return false;
  } else if (sequence == kFinalReport || leaving != nullptr) {
    return false;  // no whole report to keep: in place, where a kill leaves more of this one (docs/decisions.md)
  } else {
    // The first interim report: the samples subreport is opened in the stream, its permanent part from then on.
    open_samples_subreport(stream);
    stream.flush();
    base = stream.failed() ? -1 : sys::lseek(g_report.fd, 0, 1 /* SEEK_CUR */);
    if (base < 0) return false;
  }
  return replace_report_file(g_aside, base, sequence, leaving);
}

bool write_crash_report_aside(bool interrupted_here) {
  struct stat status {};
  long base = sys::fstat(g_report.fd, &status) == 0 ? interim_base_if_last(status) : -1;
  if (base < 0 || !replace_report_file(g_crash_aside, base, kFinalReport, nullptr)) return false;
  // The interrupted writer's NAME.new, unfinished, goes too: the crash usually ends the process. If the program's
  // own handler for the signal returns, the writer resumes, sees the report finished and renames nothing.
  if (interrupted_here && name_aside(g_aside, g_report.path)) {
    sys::call(SYS_unlinkat, AT_FDCWD, reinterpret_cast<long>(g_aside.name), 0);
  }
  return true;
}

}  // namespace sampler::runtime
