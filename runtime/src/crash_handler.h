// The crash handler (SPEC sections 3 and 6): on SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGTERM or
// SIGINT it writes the rest of the samples subreport and a main-backtrace subreport, then restores the program's
// previous disposition and re-raises, so the exit status and core dump are the uninstrumented ones.
//
//  - Async-signal-safe: raw system calls, static buffers, an mmap'd alternate stack (so a stack overflow in the
//    thread that installed it, normally the main thread, is reported), bounded loops and waits.
//  - One crash report per process: the first thread to crash writes it; another thread crashing meanwhile waits
//    (bounded) for it, then takes its own signal's previous disposition. A second crash in the reporting thread
//    (the report itself faulted) does not hang: the original signal's default action is taken at once.
//  - Signals the program ignored when the runtime started stay ignored. SIGTERM and SIGINT caught by a handler
//    of the program's own (installed before the runtime's) are passed to it without a crash report: the program
//    decided what they mean. Handlers the program installs later simply replace the runtime's.
#pragma once

#include <stdint.h>

namespace sampler::runtime {

/// Installs the handlers (start-up, single-threaded). `page_size` rounds module segments.
void install_crash_handlers(uint64_t page_size);

/// Pretty name of a signal ("SIGSEGV"), or nullptr if unknown. Signal-safe.
const char* signal_name(int signal);

}  // namespace sampler::runtime
