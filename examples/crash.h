/* sampler examples: crashing deterministically, deep in a call chain, with each signal the runtime reports.
 *
 * example_crash(kind) calls three levels of distinct functions and then the function named crash_<kind>, which
 * raises the signal itself, so that frame 0 of the report's stack names it (for abrt, frame 0 is inside libc's
 * abort() and crash_abrt is the first frame of the example). Kinds: segv bus fpe ill abrt trap term int overflow
 * thread (a SIGSEGV in crash_in_thread, on a second thread). Returns only for an unknown kind (-1).
 */
#ifndef SAMPLER_EXAMPLES_CRASH_H
#define SAMPLER_EXAMPLES_CRASH_H

int example_crash(const char* kind);

#endif
