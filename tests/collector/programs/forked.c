/* A program for the shared counters' test of fork (tests/collector/shared_counters_test.sh), built by sampler-cc:
 * 1000 calls of is_third, then a forked child makes 5000 more and exits; the parent waits for it, writes "done" on
 * the file PROGRESS (a FIFO the test reads) and waits for a signal. The child's calls must not reach the parent's
 * counters, shared mapping or not.
 * usage: forked PROGRESS */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int is_third(long turn) {
  if (turn % 3 == 0) return 1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  long thirds = 0;
  for (long turn = 0; turn < 1000; ++turn) thirds += is_third(turn);
  pid_t child = fork();
  if (child == 0) {
    for (long turn = 0; turn < 5000; ++turn) thirds += is_third(turn);
    _exit(thirds > 0 ? 0 : 1);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || status != 0) return 1;
  FILE* progress = fopen(argv[1], "w");
  if (progress == NULL) return 2;
  fprintf(progress, "done\n");
  fclose(progress);
  for (;;) pause();
}
