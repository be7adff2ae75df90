/* A program for SAMPLER_INTERVAL's tests (tests/collector/shared_counters_test.sh), built by sampler-cc: a daemon's
 * loop, which every 10 ms (poll on stdin) runs 100 turns of is_third, counting its turns from 0 across ticks,
 * until a line on stdin (or its end) makes it exit with status 0. It never calls the runtime itself: its interim
 * reports come from SAMPLER_INTERVAL alone.
 * usage: ticking */
#include <poll.h>
#include <unistd.h>

static int is_third(long turn) {
  if (turn % 3 == 0) return 1;
  return 0;
}

int main(void) {
  long turn = 0, thirds = 0;
  struct pollfd input = {.fd = 0, .events = POLLIN};
  for (;;) {
    for (int i = 0; i < 100; ++i) thirds += is_third(turn++);
    if (poll(&input, 1, 10) > 0) break;
  }
  return thirds > 0 ? 0 : 1;
}
