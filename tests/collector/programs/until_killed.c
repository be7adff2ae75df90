/* A program for the shared counters' tests (tests/collector/shared_counters_test.sh), built by sampler-cc:
 * counts ITERATIONS turns of a loop whose sites are easy to predict at sparsity 1, writing its pid and then its
 * progress (the turn reached, every EVERY turns; never with EVERY 0) to the file PROGRESS (a FIFO the test
 * reads), then "done"; then exits, or with `wait` waits for a signal.
 * usage: until_killed ITERATIONS EVERY PROGRESS [wait] */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int is_third(long turn) {
  if (turn % 3 == 0) return 1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: until_killed ITERATIONS EVERY PROGRESS [wait]\n");
    return 2;
  }
  long iterations = atol(argv[1]), every = atol(argv[2]);
  FILE* progress = fopen(argv[3], "w");
  if (progress == NULL) return 2;
  fprintf(progress, "%ld\n", (long)getpid());
  fflush(progress);
  long thirds = 0;
  for (long turn = 0; turn < iterations; ++turn) {
    thirds += is_third(turn);
    if (every > 0 && turn % every == 0) {
      fprintf(progress, "%ld\n", turn);
      fflush(progress);
    }
  }
  /* "done" comes after the last site: a test that acts on it finds every counter final. */
  if (argc == 5) {
    fprintf(progress, "done\n");
    fclose(progress);
    for (;;) pause();
  }
  fprintf(progress, "done\n");
  fclose(progress);
  return thirds > 0 ? 0 : 1;
}
