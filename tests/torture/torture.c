/* The crash-path torture program (tests/torture): one instrumented unit (this file) plus a second one
 * (torture_more.c), driven into the runtime's worst cases by torture_test.cpp. Built twice: instrumented
 * (torture, linked to libsampler.so) and with SAMPLER_UNINSTRUMENTED (torture-uninstrumented), the baseline whose
 * exit status the instrumented program must match.
 *
 *   torture work N               N iterations of the workload on the main thread, then exit(0)
 *   torture exit-wait N          the workload, then "exiting" on stdout, then exit(0): the report follows at exit
 *   torture two-threads N        the workload, then two threads fault at the same moment (SIGSEGV)
 *   torture handler-after N chain|own   installs a SIGSEGV handler of its own (after the runtime's, which is
 *                                installed at start-up), then faults. chain: the handler writes a line and passes
 *                                the signal on to the handler it replaced, as a well-behaved program does; own:
 *                                the handler writes a line and leaves with _exit(42)
 *   torture reuse-fd N FILE      closes descriptor 3 (the report's, SAMPLER_REPORT_FD=3) and opens FILE in its
 *                                place for its own data, which it writes and keeps open until exit
 *   torture sleep N              the workload, then "ready" on stdout, then sleeps (to be killed)
 *   torture threads T W N        T threads (at most 64) in waves of W at a time, each N iterations, started and
 *                                ended while the main thread keeps sampling too
 *   torture stdout N             the workload, then system() runs a shell that writes "child out" on stdout and
 *                                "child err" on stderr, then "last line" is printf()ed (left in stdio's buffer until
 *                                exit), then exit(0): with SAMPLER_REPORT_FD=1 or 2 nothing of it may be lost
 *   torture exit-crash N FIFO    the workload; a second thread prints "thread TID" and waits for a byte from FIFO;
 *                                main prints "exiting" and returns (the report follows at exit); the byte makes the
 *                                thread fault (SIGSEGV) while the exit-time report is being written
 *   torture thread-overflow N    the workload; a second thread reaches a site (its first entry into the runtime),
 *                                then overflows its stack (SIGSEGV)
 * Counts are exact at SAMPLER_SPARSITY=1 (see the expectations in torture_test.cpp).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sampler/sampler.h>

#include "torture.h"

#define SAMPLER_SCHEME_NAME_per_thread "per-thread"
#define SAMPLER_COLUMNS_per_thread 64

#define SAMPLER_UNIT_SIGNATURE "70c70e00000000000000000000000001"
#define TORTURE_SITES(SCHEME, SITE, BOUND, END)                                   \
  SCHEME(coverage, none)                                                          \
    SITE(iteration, "torture.c", "70", "work", "0")                               \
    SITE(thread_iteration, "torture.c", "90", "worker", "1")                      \
    SITE(main_while_threads, "torture.c", "120", "run_threads", "2")              \
  END(coverage)                                                                   \
  SCHEME(branches, none)                                                          \
    SITE(even, "torture.c", "71", "work", "3", "i % 2 == 0")                      \
  END(branches)                                                                   \
  SCHEME(per_thread, none)                                                        \
    SITE(by_thread, "torture.c", "91", "worker", "4", "index")                    \
  END(per_thread)
SAMPLER_DEFINE_UNIT(TORTURE_SITES);

static volatile long torture_sink;

static void work(long n) {
  for (long i = 0; i < n; ++i) {
    SAMPLER_COVERAGE(iteration);
    if (SAMPLER_BRANCH(even, i % 2 == 0)) torture_sink += 1;
  }
  torture_more_work(n);
}

/* ---- two threads faulting at the same moment */
static pthread_barrier_t barrier;

static void* fault_together(void* unused) {
  (void)unused;
  pthread_barrier_wait(&barrier);
  torture_fault();
  return NULL;
}

static int two_threads(void) {
  pthread_t threads[2];
  pthread_barrier_init(&barrier, NULL, 2);
  for (int t = 0; t < 2; ++t) {
    if (pthread_create(&threads[t], NULL, fault_together, NULL) != 0) return 1;
  }
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  return 3; /* not reached: the process dies of SIGSEGV */
}

/* ---- a handler of the program's own, installed after the runtime's */
static struct sigaction replaced;
static int own_exits;

static void program_handler(int signal, siginfo_t* info, void* context) {
  static const char line[] = "torture: program handler\n";
  ssize_t ignored = write(2, line, sizeof line - 1);
  (void)ignored;
  if (own_exits) _exit(42);
  /* Pass the signal on to whatever was installed before, as a well-behaved program does. */
  if (replaced.sa_flags & SA_SIGINFO) {
    replaced.sa_sigaction(signal, info, context);
  } else if (replaced.sa_handler == SIG_DFL || replaced.sa_handler == SIG_IGN) {
    sigaction(signal, &replaced, NULL); /* returning re-executes the fault under the default action */
  } else {
    replaced.sa_handler(signal);
  }
}

static int handler_after(const char* how) {
  own_exits = strcmp(how, "own") == 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = program_handler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSEGV, &action, &replaced) != 0) return 1;
  torture_fault();
  return 3;
}

/* ---- the report's descriptor taken over by the program's own file */
static int reuse_fd(const char* path) {
  close(3);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd != 3) return 1;
  static const char data[] = "the program's own data\n";
  if (write(fd, data, sizeof data - 1) != (ssize_t)(sizeof data - 1)) return 1;
  return 0; /* fd 3 stays open until exit, as a log file would */
}

/* ---- the report on the program's own standard streams */
static int use_stdout(void) {
  if (system("echo child out; echo child err >&2") != 0) return 1;
  printf("last line\n"); /* stays in stdio's buffer until exit flushes it, after the runtime's destructor */
  return 0;
}

/* ---- a crash on another thread while the exit-time report is being written */
static const char* crash_fifo;

static void* crash_on_byte(void* unused) {
  (void)unused;
  printf("thread %ld\n", (long)gettid());
  fflush(stdout);
  int fd = open(crash_fifo, O_RDONLY);
  char byte;
  if (fd >= 0 && read(fd, &byte, 1) == 1) torture_fault();
  return NULL;
}

static int exit_crash(const char* fifo) {
  crash_fifo = fifo;
  pthread_t thread;
  if (pthread_create(&thread, NULL, crash_on_byte, NULL) != 0) return 1;
  printf("exiting\n");
  fflush(stdout);
  return 0; /* the thread is still waiting: the runtime's exit-time report is written while it lives */
}

/* ---- a stack overflow on a second thread */
static void* overflow_thread(void* unused) {
  (void)unused;
  SAMPLER_COVERAGE(thread_iteration); /* the thread's first entry into the runtime */
  torture_sink += torture_overflow(0);
  return NULL;
}

static int thread_overflow(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, overflow_thread, NULL) != 0) return 1;
  pthread_join(thread, NULL);
  return 3; /* not reached: the process dies of SIGSEGV */
}

/* ---- threads started and ended while sampling */
static long thread_iterations;

static void* worker(void* argument) {
  long index = (long)argument;
  for (long i = 0; i < thread_iterations; ++i) {
    SAMPLER_COVERAGE(thread_iteration);
    SAMPLER_TUPLE(per_thread, by_thread, index);
  }
  return NULL;
}

static int run_threads(long total, long wave, long n) {
  if (total < 1 || total > 64 || wave < 1) return 2;
  thread_iterations = n;
  pthread_t threads[64];
  long started = 0;
  while (started < total) {
    long count = total - started < wave ? total - started : wave;
    for (long t = 0; t < count; ++t) {
      if (pthread_create(&threads[started + t], NULL, worker, (void*)(started + t)) != 0) return 1;
    }
    /* The main thread samples while they run. */
    for (long i = 0; i < n; ++i) SAMPLER_COVERAGE(main_while_threads);
    for (long t = 0; t < count; ++t) pthread_join(threads[started + t], NULL);
    started += count;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: torture MODE N [ARGS]\n");
    return 2;
  }
  const char* mode = argv[1];
  long n = atol(argv[2]);
  if (strcmp(mode, "threads") == 0) {
    if (argc != 5) return 2;
    return run_threads(atol(argv[2]), atol(argv[3]), atol(argv[4]));
  }
  work(n);
  if (strcmp(mode, "work") == 0) return 0;
  if (strcmp(mode, "exit-wait") == 0) {
    printf("exiting\n");
    fflush(stdout);
    return 0;
  }
  if (strcmp(mode, "two-threads") == 0) return two_threads();
  if (strcmp(mode, "handler-after") == 0 && argc == 4) return handler_after(argv[3]);
  if (strcmp(mode, "reuse-fd") == 0 && argc == 4) return reuse_fd(argv[3]);
  if (strcmp(mode, "stdout") == 0) return use_stdout();
  if (strcmp(mode, "exit-crash") == 0 && argc == 4) return exit_crash(argv[3]);
  if (strcmp(mode, "thread-overflow") == 0) return thread_overflow();
  if (strcmp(mode, "sleep") == 0) {
    printf("ready\n");
    fflush(stdout);
    for (;;) pause();
  }
  fprintf(stderr, "torture: unknown mode '%s'\n", mode);
  return 2;
}
