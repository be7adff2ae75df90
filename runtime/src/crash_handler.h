// The crash handler (docs/instrumenting.md section 3): on SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGTERM or
// SIGINT it writes the rest of the samples subreport and a main-backtrace subreport, then restores the program's
// previous disposition and re-raises, so the exit status and core dump are the uninstrumented ones.
//
//  - Async-signal-safe: raw system calls, static buffers, bounded loops and waits.
//  - Alternate signal stacks (mmap'd, with a guard page), so that a stack overflow is reported: the thread that
//    initialises the runtime (normally the main thread) gets one at start-up, every other thread at its first
//    entry into the runtime (its first site, prepare_thread_for_crashes), freed when the thread exits (a
//    pthread key's destructor). A thread that already has one (the program's) keeps it.
//  - One crash report per process: the first thread to crash writes it; another thread crashing meanwhile waits
//    (bounded) for it, then takes its own signal's previous disposition. A second crash in the reporting thread
//    (the report itself faulted) does not hang: the original signal's default action is taken at once.
//  - Signals the program ignored when the runtime started stay ignored. SIGTERM and SIGINT caught by a handler
//    of the program's own (installed before the runtime's) are passed to it without a crash report: the program
//    decided what they mean, and the one crash report stays available for a later crash. Handlers the program
//    installs later simply replace the runtime's.
//  - A crash on one thread while another writes the exit-time report: the crash wins. The exit-time writer lets
//    the crash path finish the report (the rest of the samples, then main-backtrace) and waits for it to end the
//    process with the crash's signal (crash_under_way_elsewhere, wait_for_crash_to_end_process).
#pragma once

#include <stdint.h>

namespace sampler::runtime {

/// Installs the handlers (start-up, single-threaded). `page_size` rounds module segments.
void install_crash_handlers(uint64_t page_size);

/// Called at each thread's first entry into the runtime: gives it an alternate signal stack (if the crash
/// handlers are installed and the thread has none), freed at the thread's exit.
void prepare_thread_for_crashes();

/// True while a thread other than the caller is in the crash handler writing the crash report (or waiting for the
/// registry lock to write it). Signal-safe.
bool crash_under_way_elsewhere();

/// Waits (bounded: the crash handler's own bounds, then one second) for the crash under way on another thread to
/// end the process. Returns only if it did not (the program's own handler survived the crash).
void wait_for_crash_to_end_process();

/// Pretty name of a signal ("SIGSEGV"), or nullptr if unknown. Signal-safe.
const char* signal_name(int signal);

}  // namespace sampler::runtime
