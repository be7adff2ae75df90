/* A program for SAMPLER_INTERVAL's tests (tests/collector/shared_counters_test.sh), built by sampler-cc: a daemon's
 * loop, which every 10 ms (poll on stdin) runs 100 turns of is_third, counting its turns from 0 across ticks,
 * until a line on stdin (or its end) makes it exit with status 0. WORKERS more threads (default none) meanwhile
 * loop on is_fifth without pause, so that several threads find the interim report due at once. The program never
 * calls the runtime itself: its interim reports come from SAMPLER_INTERVAL alone.
 * usage: ticking [WORKERS] */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static int is_third(long turn) {
  if (turn % 3 == 0) return 1;
  return 0;
}

static int is_fifth(long turn) {
  if (turn % 5 == 0) return 1;
  return 0;
}

static void* work(void* unused) {
  (void)unused;
  volatile long fifths = 0;
  for (long turn = 0;; ++turn) fifths += is_fifth(turn);
  return NULL;
}

int main(int argc, char** argv) {
  int workers = argc > 1 ? atoi(argv[1]) : 0;
  for (int i = 0; i < workers; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, work, NULL) != 0) return 2;
  }
  long turn = 0, thirds = 0;
  struct pollfd input = {.fd = 0, .events = POLLIN};
  for (;;) {
    for (int i = 0; i < 100; ++i) thirds += is_third(turn++);
    if (poll(&input, 1, 10) > 0) break;
  }
  return thirds > 0 ? 0 : 1;
}
