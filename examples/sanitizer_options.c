/* sampler examples, sanitizer builds only (SAMPLER_SANITIZE, SAMPLER_TSAN; see examples/CMakeLists.txt): the
 * examples that crash on purpose (crash.c's faults, wordfreq.c's bug) carry AddressSanitizer or ThreadSanitizer
 * there, whose own handlers would turn the faults into a sanitizer report and exit(1). An instrumented program is
 * not built that way in the field: leave the fatal signals to the program and libsampler, whoever runs it (the
 * tools' end-to-end tests, scripts/demo.sh). ASAN_OPTIONS and TSAN_OPTIONS in the environment still win. */
const char* __asan_default_options(void);
const char* __tsan_default_options(void);

const char* __asan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0";
}

const char* __tsan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0";
}
