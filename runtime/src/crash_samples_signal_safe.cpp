// The samples part of a crash report (see runtime_state.h, write_crash_samples). Signal-safe: raw system calls,
// the static registry, bounded waits; it never takes the registry lock without a time limit.
#include "atomic.h"
#include "plan.h"
#include "raw_syscall.h"
#include "runtime_state.h"

namespace sampler::runtime {
namespace {

/// How long the crash path waits for another thread to finish a report write before writing anyway.
constexpr int kLockWaitSteps = 2000;
constexpr long kLockWaitStepNanoseconds = 1000000;  // 1 ms: 2 s in all

}  // namespace

bool destination_unchanged() {
  struct stat status {};
  return sys::fstat(g_report.fd, &status) == 0 && status.st_dev == g_report.device && status.st_ino == g_report.inode;
}

void discard_interim_report() {
  if (!load_acquire(&g_report.interim_written)) return;
  struct stat status {};
  if (sys::fstat(g_report.fd, &status) == 0 && status.st_size <= g_report.interim_end) {
    sys::ftruncate(g_report.fd, g_report.interim_base);
    sys::lseek(g_report.fd, g_report.interim_base, 0);
  } else {
    g_report.samples_open = 0;  // the interim report closed it: the stream goes on with a new one
  }
  store_release(&g_report.interim_written, 0);
}

bool write_crash_samples(ReportWriter& out) {
  if (g_report.fd < 0 || g_report.pid != sys::getpid() || load_acquire(&g_report.closed)) return false;
  if (!destination_unchanged()) return false;  // the program closed or reused the descriptor
  // Ended by the exit-time writer, which waits for this crash to end the process (report.cpp): the samples are
  // all out, the main-backtrace follows them.
  if (__atomic_load_n(&g_report.finished, __ATOMIC_SEQ_CST)) return true;  // see handle_crash
  pid_t self = sys::gettid();
  bool locked = false, interrupted_here = false;
  for (int step = 0; step < kLockWaitSteps; ++step) {
    pid_t expected = 0;
    if (compare_exchange(&g_report.lock_owner, expected, self)) {
      locked = true;
      break;
    }
    if (expected == self) {  // this thread crashed while writing: carry on from where it stopped
      interrupted_here = true;
      break;
    }
    sys::nanosleep(kLockWaitStepNanoseconds);
  }
  if (load_acquire(&g_report.finished)) {  // another thread ended the samples subreport while we waited
    if (locked) store_release(&g_report.lock_owner, pid_t{0});
    return !load_acquire(&g_report.closed);
  }
  // Over a whole interim report, the report is written beside the file and renamed over it, as at exit: a kill in
  // the middle (SIGKILL after SIGTERM) leaves the interim report. Without the lock, through the crash's own buffers
  // and file: the lock holder (a writer this thread interrupted, or a thread that kept the lock) may be using the
  // others. Only the permanent part is copied from the file, which that writer changes only by a rename.
  if (locked ? write_report_aside(out, kFinalReport) : write_crash_report_aside(interrupted_here)) {
    if (locked) store_release(&g_report.lock_owner, pid_t{0});
    return true;  // the samples are finished; the main-backtrace follows them in the new file
  }
  // An interim report (perhaps interrupted) is taken back: the stream is again between two sections, or (a file
  // someone wrote to after it) goes on with a new samples subreport.
  const bool interim = load_acquire(&g_report.interim_written);
  discard_interim_report();
  if (!g_report.samples_open) {
    open_samples_subreport(out);
  } else if (!interim) {
    // Close what an interrupted writer left open, so the report stays well formed (sampler manual).
    const ReportWriter& normal = *g_report.writer;
    if (normal.flushed_mid_line()) out.end_line();
    if (normal.flushed_open_section() == OpenSection::kSamples) {
      out.append("</samples>");
      out.end_line();
    } else if (normal.flushed_open_section() == OpenSection::kTimestamps) {
      out.append("</timestamps>");
      out.end_line();
    }
  }
  out.flush();
  // Units are read with acquire loads: registration publishes them with release stores. A unit already
  // reported by an interrupted exit is not repeated (merging would count it twice); one that was being written
  // when the crash came is left out: its text is partly out, and its tables may be what the program broke.
  size_t visited = 0;
  for (sampler_unit* u = load_acquire(&g_report.head); u != nullptr && visited < kMaxUnits;
       u = load_acquire(&u->next), ++visited) {
    if (load_acquire(&u->state) != kUnitRegistered) continue;
    write_unit(out, *u);
    out.flush();  // a unit the program damaged may fault the next one: keep what is written
  }
  out.append("</report>");
  out.end_line();
  write_plan_subreport(out);
  store_release(&g_report.finished, 1);
  if (locked) store_release(&g_report.lock_owner, pid_t{0});
  return true;
}

}  // namespace sampler::runtime
