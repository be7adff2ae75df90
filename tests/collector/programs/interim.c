/* A program for the interim reports' test (tests/collector/shared_counters_test.sh), built by sampler-cc: ROUNDS
 * rounds of 1000 calls of is_third, each followed by sampler_write_report() and a line "ROUND" on the file PROGRESS
 * (a FIFO the test reads); then it waits for the test to read the report and send a line on its stdin, and
 * finally exits with status 0 at a line "exit" on its stdin, or waits for a signal.
 * usage: interim ROUNDS PROGRESS */
#include <sampler/sampler.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int is_third(long turn) {
  if (turn % 3 == 0) return 1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  long rounds = atol(argv[1]);
  FILE* progress = fopen(argv[2], "w");
  if (progress == NULL) return 2;
  long thirds = 0;
  char line[16];
  for (long round = 1; round <= rounds; ++round) {
    for (long turn = 0; turn < 1000; ++turn) thirds += is_third(turn);
    sampler_write_report();
    fprintf(progress, "%ld\n", round);
    fflush(progress);
    if (fgets(line, sizeof line, stdin) == NULL) return 1;
  }
  fprintf(progress, "%ld\n", thirds);
  fclose(progress);
  if (fgets(line, sizeof line, stdin) != NULL && line[0] == 'e') return 0;
  for (;;) pause();
}
