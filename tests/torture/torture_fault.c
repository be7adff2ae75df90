/* The torture programs' fault, built without sanitizers in sanitizer builds: the fault is the point, and the
 * crash path of libsampler must see it as an uninstrumented program has it (like examples/crash.c). */
#include <stdint.h>

#include "torture.h"

volatile int torture_zero = 0;

#if defined(__clang__)
__attribute__((noinline))
#else
__attribute__((noinline, noclone))
#endif
void torture_fault(void) {
  volatile int* pointer = (volatile int*)(uintptr_t)torture_zero;
  *pointer = 1;
}

/* Deliberately unbounded (the bound is never reached): each frame keeps a kilobyte live, so the stack runs out. */
volatile int torture_overflow_limit = 1 << 30;
#if defined(__clang__)
__attribute__((noinline))
#else
__attribute__((noinline, noclone))
#endif
int torture_overflow(int depth) {
  volatile char frame[1024];
  frame[0] = (char)depth;
  frame[sizeof frame - 1] = (char)depth;
  if (depth >= torture_overflow_limit) return frame[0];
  return torture_overflow(depth + 1) + frame[depth % sizeof frame];
}

#if defined(SAMPLER_TORTURE_SANITIZED)
/* In sanitizer builds the programs carry AddressSanitizer or ThreadSanitizer: their handlers must leave the fatal
 * signals to the program and libsampler, as in an ordinary build. The environment still wins. */
const char* __asan_default_options(void);
const char* __tsan_default_options(void);
const char* __asan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0";
}
const char* __tsan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0";
}
#endif
