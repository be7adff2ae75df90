// The runtime's process-wide state: initialisation, the unit registry and the report's life cycle.
//
// The report is written as a stream into its destination: `<report id="samples">` when the first section is
// due, a unit's sections when it is unregistered (dlclose) or when the report ends, `</report>` at the end. It
// ends at normal exit (the runtime's destructor), in the crash handler (then `main-backtrace` follows), or on
// sampler_finish_report(). Only the process that opened the destination writes to it (a forked child never does).
#pragma once

#include <sys/types.h>

#include "atomic.h"
#include "log.h"
#include "report_writer.h"
#include "sampler/abi.h"
#include "shared_counters.h"

namespace sampler::runtime {

/// Reads the settings and sets everything up, once; later calls return at once. Called by the runtime's
/// constructor and, should a site or a unit come first, by them. True when initialisation is complete (false on
/// the initialising thread itself, re-entering, and after waiting too long for another thread).
bool ensure_initialized();

/// Unit states (sampler_unit::state). The crash path writes only units in kUnitRegistered: a unit being written
/// was interrupted (its text is partly out), a reported one is already out.
enum : uintptr_t { kUnitUnregistered = 0, kUnitRegistered = 1, kUnitWriting = 2, kUnitReported = 3 };

struct ReportState {
  int fd = -1;                   ///< destination, -1 when there is no report
  const char* path = nullptr;    ///< SAMPLER_FILE's name when it is a regular file, else null (write_interim_report)
  pid_t pid = 0;                 ///< the process that owns the destination
  int samples_open = 0;          ///< `<report id="samples">` has been written
  int finished = 0;              ///< the samples subreport is closed: nothing more of it is written
  int closed = 0;                ///< the descriptor is closed (or about to be): nothing more at all is written
  pid_t lock_owner = 0;          ///< thread holding the registry lock, 0 when free
  sampler_unit* head = nullptr;  ///< registered units, in registration order
  sampler_unit* tail = nullptr;
  ReportWriter* writer = nullptr;  ///< the writer of the normal paths (exit, dlclose), under the lock
  uint64_t device = 0;             ///< identity of the destination when it was opened (fstat st_dev, st_ino)
  uint64_t inode = 0;
  SharedArea shared;               ///< the shared counters' mapping, claimed by this process; empty when none
  const char* counters_path = nullptr;  ///< %c: the counters file (removed at a normal exit), else null
  int counters_fd = -1;                 ///< %c: the runtime's descriptor of it (its flock), else -1
  // The interim report (sampler_write_report): text past interim_base is a snapshot, taken back before the
  // stream goes on (discard_interim_report).
  int interim_written = 0;          ///< the destination holds an interim report past interim_base
  long interim_base = 0;            ///< where the stream's permanent part ends
  long interim_end = 0;             ///< where the interim report ends: the file's size unless someone wrote after it
  uint64_t interim_sequence = 0;    ///< interim reports written so far
};
extern ReportState g_report;

/// Sets the destination (called once by initialisation); -1 for none. `path`: SAMPLER_FILE's name (static storage)
/// when the destination is that regular file, else null.
void open_report(int fd, const char* path);

/// True if the report's descriptor still refers to the file it was opened on. A program may close it and open a
/// file of its own that gets the same number (a daemon closing every descriptor, then opening its log): the report
/// must never be written into that file. Signal-safe (one fstat system call).
bool destination_unchanged();

/// Claims the shared counters' mapping, SAMPLER_SHARED_FD's or (`counters_path`, `counters_fd`) the counters file
/// of %c in SAMPLER_FILE (called once by initialisation, before any unit registers): from then on registration
/// places each unit's counters in it. Unmaps it, with one line on stderr, if it cannot be claimed.
void open_shared_counters(unsigned char* base, uint64_t size, const char* counters_path, int counters_fd);

/// In a forked child: replaces the shared mapping by a private copy at the same address, so that the child's
/// samples never reach the parent's counters (as without the mapping) and every `values` pointer stays valid;
/// closes the child's copy of the counters file's descriptor and forgets its name (the parent's to remove).
void detach_shared_counters();

/// At a normal exit whose report is whole: removes the counters file of %c (if the name still refers to it), which
/// then holds nothing the report does not.
void remove_counters_file();

/// Bound on a walk of the registry: a list the program corrupted into a cycle must not hang the crash path.
inline constexpr size_t kMaxUnits = size_t{1} << 20;

/// Writes `<report id="samples">` with `out` unless the stream has it already (g_report.samples_open).
void open_samples_subreport(ReportWriter& out);

/// The sequence number write_snapshot() and write_report_aside() take for the final report (interim reports count
/// from 1).
inline constexpr uint64_t kFinalReport = 0;

/// The rest of a report after the stream's permanent part: every registered unit's sections but `leaving`'s, the end
/// of the samples subreport, the `plan` subreport, and for an interim report (sequence > 0) the `interim` subreport.
/// Signal-safe.
void write_snapshot(ReportWriter& out, uint64_t sequence, const sampler_unit* leaving = nullptr);

/// The report written whole beside the file SAMPLER_FILE names and renamed over it, so that the name holds a whole
/// report at every instant: the stream's permanent part and write_snapshot(sequence) go to NAME.new, renamed over
/// NAME, and the report's descriptor then refers to the new file (an interim report in it is taken back before the
/// stream goes on, as in place; after the final report the samples subreport is finished). A unit `leaving` (its
/// unregistration: dlclose, or the exit's destructors) has its sections join the permanent part, before an interim
/// report `sequence` of the others. The final report (kFinalReport) and a leaving unit are written so only when the
/// file holds an interim report, which writing in place would take back first (docs/decisions.md, "Interim reports
/// by the runtime's own clock"). `stream` writes to the report's descriptor: the first interim report opens the
/// samples subreport there. False, with nothing changed, when the report cannot be written so (no name, not a
/// regular file, someone wrote after the interim report, NAME.new cannot be made, a write fails, the final report
/// while a crash is under way on another thread): the caller writes in place, unless a crash has finished the
/// report meanwhile (g_report.finished), which is then left alone. Called under the registry lock; the
/// crash path calls it only when it took the lock itself (the static buffers are the lock holder's). Signal-safe.
bool write_report_aside(ReportWriter& stream, uint64_t sequence, sampler_unit* leaving = nullptr);

/// The crash path's final report when it could not take the registry lock (`interrupted_here`: this thread holds it,
/// a writer the crash interrupted; else another thread kept it past the wait): over a whole interim report, written
/// as write_report_aside() writes it, but through the crash's own buffers and beside the file as NAME.crash, since
/// the lock holder may be using the others and holds NAME.new open and locked. An interrupted writer's NAME.new is
/// removed once the rename is done: the crash usually ends the process, and a writer that resumes (the program's
/// own handler for the signal returned) finds the report finished and leaves it alone. False, with nothing changed,
/// when there is no such interim report or it cannot be written so: the crash path writes in place. Signal-safe.
bool write_crash_report_aside(bool interrupted_here);

/// The samples subreport was finished while this thread, holding the registry lock, was writing: by a crash (the
/// holder writes everything else). A crash on this thread whose signal the program's own handler survived (SIGABRT
/// sent by kill(), say) lets the writer resume; a crash on another thread may have written past the lock's wait.
/// The crash's report is the final one: the writer leaves it alone (docs/decisions.md, "A writer resumed after a
/// crash").
inline bool crash_finished_report() { return load_acquire(&g_report.finished) != 0; }

/// sampler_write_report() and SAMPLER_INTERVAL: under the registry lock, replaces the last interim report (if any)
/// with the samples counted so far, a whole samples subreport and an `interim` subreport with its sequence number,
/// written past the stream's permanent part. A report file named by SAMPLER_FILE is replaced whole: the stream's
/// permanent part and the snapshot are written to NAME.new beside it, renamed over it, and the stream goes on in
/// the new file, so that the name holds a whole report at every instant. Any other seekable destination (a memfd or
/// file given as SAMPLER_REPORT_FD) gets the snapshot in place, past the permanent part. A destination that cannot
/// take a snapshot back (a pipe, a terminal) gets nothing.
void write_interim_report();

/// SAMPLER_INTERVAL: when the next interim report is due, in nanoseconds of CLOCK_MONOTONIC_COARSE; 0 for never
/// (no interval, the report finished, a forked child).
extern uint64_t g_interim_due;

/// Starts the interval (called once by initialisation, with a report destination): the first report is due
/// `seconds` from now. A destination that is not a regular file (a pipe, a terminal) cannot take interim reports:
/// then it does not start.
void start_interval(uint32_t seconds);

/// poll_interval()'s rest: writes an interim report if one is due and no other thread has taken this one.
void write_interim_report_if_due();

/// The interval's check, on the sample path (the bank's refill) and when a unit unregisters: one load and a branch
/// without SAMPLER_INTERVAL. The runtime starts no thread and takes no signal for it: a program that stops sampling
/// gets its next interim report when it samples again.
inline void poll_interval() {
  if (__builtin_expect(load_relaxed(&g_interim_due) != 0, 0)) write_interim_report_if_due();
}

/// Takes the interim report back (truncates the destination to where the stream's permanent part ends), before
/// the stream goes on: every normal write and the crash path call it. A destination someone else wrote to after
/// the interim report (a file the program also writes through a descriptor it shares) is never cut: the interim
/// report then stays where it is. Signal-safe (three system calls).
void discard_interim_report();

void register_unit(sampler_unit* unit);
/// Writes the unit's sections (if the report is still open in this process) and removes it from the registry.
void unregister_unit(sampler_unit* unit);
/// Writes every registered unit, closes the samples subreport and the destination (over an interim report, the
/// report is written aside and renamed: write_report_aside). Idempotent.
void finish_report();

/// SIGTERM or SIGINT that arrived while this process's normal writer (exit, dlclose) was in the middle of a flush
/// on the same thread, 0 if none. The crash handler defers such a signal instead of writing over a half-done
/// write whose extent it cannot know; the writer raises it again as soon as its flush is complete (see
/// raise_deferred_signal), and the crash handler then ends the report from a line boundary.
extern int g_deferred_signal;
/// Called by the normal writer after each flush, with the registry lock held: re-raises a deferred signal.
void raise_deferred_signal();

/// Crash path (signal-safe): waits a bounded time for another thread holding the registry lock, then writes the
/// rest of the samples subreport (closing what an interrupted writer left open) and `</report>` with `out`.
/// Returns false if this process has no open report. If the exit-time writer has just ended the samples subreport
/// (and let the crash take over before closing the destination), writes nothing and returns true: the
/// main-backtrace follows.
bool write_crash_samples(ReportWriter& out);

/// Testing and benchmarks (static library only): writes the samples subreport of the registered units to `sink`
/// without touching the report's state.
void write_samples_subreport(Sink sink);

}  // namespace sampler::runtime
