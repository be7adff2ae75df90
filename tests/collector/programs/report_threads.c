/* A program for the threaded report writers' tests (tests/collector/shared_counters_test.sh), built by sampler-cc.
 * report_threads crash PROGRESS: 1000 calls of is_third and sampler_write_report() (interim report 1), a line "1"
 *   on the file PROGRESS (a FIFO the test reads) and a line awaited on stdin; then a second thread makes 1000 calls
 *   and writes a report, which stops in its first write: RLIMIT_FSIZE is 0 and the thread's SIGXFSZ handler never
 *   returns, so the thread holds the registry lock for good. The main thread then crashes (SIGSEGV).
 * report_threads concurrent THREADS ROUNDS: THREADS threads each make ROUNDS rounds of 100 calls of is_third and
 *   sampler_write_report(), all at once; then the program exits with status 0.
 * report_threads resumed interim|exit|none (built as install_abort_handler says): a program with its own SIGABRT handler,
 *   which returns (installed by a constructor that runs before the runtime's, so the runtime passes the signal on
 *   to it). 1000 calls of is_third
 *   and sampler_write_report() (interim report 1), 1000 more calls; then the next report (interim:
 *   sampler_write_report(); exit: the exit-time report) stops in its first write: RLIMIT_FSIZE is 0, and the
 *   SIGXFSZ handler restores the limit and raises SIGABRT on the same thread, whose handler returns, and so does the
 *   write. Exit status 0 (3 if the SIGABRT handler never ran). none: the same calls and reports, no limit and no
 *   signal (the counts to compare with). */
#include <pthread.h>
#include <sampler/sampler.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int is_third(long turn) {
  if (turn % 3 == 0) return 1;
  return 0;
}

static long calls(long count) {
  long thirds = 0;
  for (long turn = 0; turn < count; ++turn) thirds += is_third(turn);
  return thirds;
}

/* Written by the held writer's SIGXFSZ handler once it holds the thread inside the report's write. */
static int held[2];

static void hold_writer(int signal) {
  (void)signal;
  char said = 'h';
  (void)!write(held[1], &said, 1);
  for (;;) pause();
}

static void* write_held(void* unused) {
  (void)unused;
  sigset_t xfsz;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_UNBLOCK, &xfsz, NULL); /* this thread alone takes the write's SIGXFSZ */
  calls(1000);
  sampler_write_report();
  return NULL;
}

static int crash(const char* progress_name) {
  FILE* progress = fopen(progress_name, "w");
  char line[16];
  if (progress == NULL || pipe(held) != 0) return 2;
  calls(1000);
  sampler_write_report();
  fprintf(progress, "1\n");
  fflush(progress);
  if (fgets(line, sizeof line, stdin) == NULL) return 1;

  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = hold_writer;
  sigaction(SIGXFSZ, &action, NULL);
  sigset_t xfsz;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, NULL);
  struct rlimit limit;
  getrlimit(RLIMIT_FSIZE, &limit);
  rlim_t soft = limit.rlim_cur;
  limit.rlim_cur = 0;
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
  pthread_t writer;
  if (pthread_create(&writer, NULL, write_held, NULL) != 0) return 2;
  char said;
  if (read(held[0], &said, 1) != 1) return 2;
  limit.rlim_cur = soft; /* the crash's own report must not meet the limit */
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
  volatile int* volatile nowhere = NULL;
  *nowhere = 1;
  return 1;
}

static long rounds;

static void* write_reports(void* unused) {
  (void)unused;
  for (long round = 0; round < rounds; ++round) {
    calls(100);
    sampler_write_report();
  }
  return NULL;
}

static int concurrent(long threads) {
  pthread_t writers[64];
  if (threads < 1 || threads > 64) return 2;
  for (long i = 0; i < threads; ++i) {
    if (pthread_create(&writers[i], NULL, write_reports, NULL) != 0) return 2;
  }
  for (long i = 0; i < threads; ++i) pthread_join(writers[i], NULL);
  return 0;
}

static volatile sig_atomic_t aborted;

static void survive_abort(int signal) {
  (void)signal;
  aborted = 1;
}

/* Priority 100, before the runtime's constructor (101) installs its crash handlers, when the runtime is linked in
 * and this function has no sites (sampler-cc -static-libsampler -fsampler-exclude-function=install_abort_handler:
 * a site would initialise the runtime first): the runtime then knows this handler as the program's own and passes
 * SIGABRT on to it after writing the crash report. */
__attribute__((constructor(100))) static void install_abort_handler(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = survive_abort;
  sigaction(SIGABRT, &action, NULL);
}

static struct rlimit file_size;

static void abort_in_write(int signal) {
  (void)signal;
  setrlimit(RLIMIT_FSIZE, &file_size); /* the crash's own report must not meet the limit */
  raise(SIGABRT);
}

static int resumed(const char* where) {
  calls(1000);
  sampler_write_report();
  calls(1000);
  if (strcmp(where, "none") == 0) return 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = abort_in_write;
  sigaction(SIGXFSZ, &action, NULL);
  getrlimit(RLIMIT_FSIZE, &file_size);
  struct rlimit none = file_size;
  none.rlim_cur = 0;
  if (setrlimit(RLIMIT_FSIZE, &none) != 0) return 2;
  if (strcmp(where, "exit") == 0) return 0; /* the exit-time report meets the limit */
  sampler_write_report();
  return aborted ? 0 : 3;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "resumed") == 0) return resumed(argv[2]);
  if (argc == 3 && strcmp(argv[1], "crash") == 0) return crash(argv[2]);
  if (argc == 4 && strcmp(argv[1], "concurrent") == 0) {
    rounds = atol(argv[3]);
    return concurrent(atol(argv[2]));
  }
  return 2;
}
