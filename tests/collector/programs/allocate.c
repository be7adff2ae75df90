/* A program for the out-of-memory tests (tests/collector/shared_counters_test.sh, counters_file_test.sh), built by
 * sampler-cc: moves itself into the memory cgroup whose cgroup.procs file it is given ("-": it is already where it must be), runs
 * 1000 turns of is_third, writes "allocating" and the number of thirds on stdout, then allocates and touches 1 MiB after 1 MiB until the
 * kernel's OOM killer kills it. It never returns on its own: if allocation fails instead (an address-space limit),
 * it exits with status 3.
 * usage: allocate CGROUP_PROCS|- */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_third(long turn) {
  if (turn % 3 == 0) return 1;
  return 0;
}

/* Every block, chained from here: memory the program keeps and can reach, which the compiler must allocate. */
static void* volatile g_blocks;

static void* grow(void) {
  void** block = malloc(1 << 20);
  if (block == NULL) return NULL;
  memset(block, 1, 1 << 20); /* touched: the pages are the cgroup's */
  *block = g_blocks;
  g_blocks = block;
  return block;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: allocate CGROUP_PROCS|-\n");
    return 2;
  }
  if (strcmp(argv[1], "-") != 0) {
    FILE* procs = fopen(argv[1], "w");
    if (procs == NULL || fprintf(procs, "%ld\n", (long)getpid()) < 0 || fclose(procs) != 0) {
      perror(argv[1]);
      return 2;
    }
  }
  long thirds = 0;
  for (long turn = 0; turn < 1000; ++turn) thirds += is_third(turn);
  printf("allocating %ld\n", thirds);
  fflush(stdout);
  for (;;) {
    if (grow() == NULL) return 3;
  }
}
