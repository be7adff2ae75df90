/* sampler examples: the deterministic crashes of crash.h. Built with -fno-omit-frame-pointer and without
 * inlining the crash functions, so each one is a frame of its own. Not instrumented itself. */
#define _GNU_SOURCE
#include "crash.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

/* Sends `signal` to the calling thread with the system call instruction inline, so the signal is delivered on
 * the return from it, inside the calling function: that function is then frame 0, not libc's raise(). */
static inline void send_to_self(int signal) {
#if defined(__x86_64__)
  long pid = syscall(SYS_getpid), tid = syscall(SYS_gettid), result;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile("syscall" : "=a"(result) : "a"((long)SYS_tgkill), "D"(pid), "S"(tid), "d"((long)signal), "r"(r10)
                   : "rcx", "r11", "memory");
  (void)result;
#else
  raise(signal);
#endif
}

/* In sanitizer builds, sanitizer_options.c (linked with this file) leaves these faults to the program and
 * libsampler, rather than to the sanitizers' own handlers. */

volatile int example_zero = 0;
volatile int example_one = 1;
volatile int example_sink;

NOINLINE void crash_segv(void) {
  volatile int* null_pointer = (volatile int*)(uintptr_t)example_zero;
  *null_pointer = 42;
}

NOINLINE void crash_bus(void) {
  /* A mapping past the end of its file: touching it raises SIGBUS (BUS_ADRERR). */
  char name[] = "/tmp/sampler-example-bus-XXXXXX";
  int fd = mkstemp(name);
  if (fd < 0) abort();
  unlink(name);
  volatile char* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED) abort();
  page[0] = 1;
}

NOINLINE void crash_fpe(void) {
#if defined(__x86_64__) || defined(__i386__)
  /* Both operands volatile: GCC turns 1 / x into a comparison, with no division to trap. */
  example_sink = example_one / example_zero;
#else
  send_to_self(SIGFPE);
#endif
}

NOINLINE void crash_ill(void) {
  __builtin_trap();
}

NOINLINE void crash_abrt(void) {
  abort();
}

NOINLINE void crash_trap(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ volatile("int3");
#elif defined(__aarch64__)
  __asm__ volatile("brk #0");
#else
  send_to_self(SIGTRAP);
#endif
  example_sink = 0;
}

NOINLINE void crash_term(void) {
  send_to_self(SIGTERM);
  example_sink = 0;
}

NOINLINE void crash_int(void) {
  send_to_self(SIGINT);
  example_sink = 0;
}

/* Deliberately unbounded (the bound is never reached): each frame keeps a kilobyte live, so the main thread's
 * stack runs out after a few thousand frames. */
volatile int example_overflow_limit = 1 << 30;
NOINLINE int crash_overflow(int depth) {
  volatile char frame[1024];
  frame[0] = (char)depth;
  frame[sizeof frame - 1] = (char)depth;
  if (depth >= example_overflow_limit) return frame[0];
  return crash_overflow(depth + 1) + frame[depth % sizeof frame];
}

NOINLINE void crash_in_thread(void) {
  volatile int* null_pointer = (volatile int*)(uintptr_t)example_zero;
  *null_pointer = 7;
}

static void* crashing_thread(void* argument) {
  (void)argument;
  crash_in_thread();
  return NULL;
}

NOINLINE void crash_thread(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, crashing_thread, NULL) != 0) abort();
  pthread_join(thread, NULL);
}

NOINLINE static int crash_level_3(const char* kind) {
  if (strcmp(kind, "segv") == 0) crash_segv();
  else if (strcmp(kind, "bus") == 0) crash_bus();
  else if (strcmp(kind, "fpe") == 0) crash_fpe();
  else if (strcmp(kind, "ill") == 0) crash_ill();
  else if (strcmp(kind, "abrt") == 0) crash_abrt();
  else if (strcmp(kind, "trap") == 0) crash_trap();
  else if (strcmp(kind, "term") == 0) crash_term();
  else if (strcmp(kind, "int") == 0) crash_int();
  else if (strcmp(kind, "overflow") == 0) example_sink = crash_overflow(0);
  else if (strcmp(kind, "thread") == 0) crash_thread();
  else return -1;
  return 0;
}

NOINLINE static int crash_level_2(const char* kind) { return crash_level_3(kind) + example_zero; }
NOINLINE static int crash_level_1(const char* kind) { return crash_level_2(kind) + example_zero; }

int example_crash(const char* kind) { return crash_level_1(kind) + example_zero; }
