/* Example 3: several threads hitting the same sites.
 *
 *   sampler-example-threads THREADS N    THREADS threads (at most 64), each running N iterations that reach
 *                                        the shared sites and column `thread index` of a per-thread tuple site
 * At SAMPLER_SPARSITY=1 the totals are exact (THREADS * N); at sparsity 100 each thread's column shows its own
 * fair share (about N / 100).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <sampler/sampler.h>

#define MAX_THREADS 64
#define SAMPLER_SCHEME_NAME_per_thread "per-thread"
#define SAMPLER_COLUMNS_per_thread MAX_THREADS

#define SAMPLER_UNIT_SIGNATURE "c0ffee00c0ffee00c0ffee00c0ffee00"
#define THREAD_SITES(SCHEME, SITE, BOUND, END)                                         \
  SCHEME(coverage, none)                                                               \
    SITE(iteration, "threads.c", "37", "worker", "1")                                  \
  END(coverage)                                                                        \
  SCHEME(branches, last)                                                               \
    SITE(even, "threads.c", "38", "worker", "2", "i % 2 == 0")                         \
  END(branches)                                                                        \
  SCHEME(per_thread, none)                                                             \
    SITE(by_thread, "threads.c", "39", "worker", "3", "index")                         \
  END(per_thread)
SAMPLER_DEFINE_UNIT(THREAD_SITES);

static long iterations;
static volatile long sink[MAX_THREADS];

static void* worker(void* argument) {
  long index = (long)argument;
  for (long i = 0; i < iterations; ++i) {
    SAMPLER_COVERAGE(iteration);
    if (SAMPLER_BRANCH(even, i % 2 == 0)) sink[index] += 1;
    SAMPLER_TUPLE(per_thread, by_thread, index);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: sampler-example-threads THREADS N\n");
    return 2;
  }
  long threads = atol(argv[1]);
  iterations = atol(argv[2]);
  if (threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "sampler-example-threads: THREADS must be 1..%d\n", MAX_THREADS);
    return 2;
  }
  pthread_t ids[MAX_THREADS];
  for (long t = 0; t < threads; ++t) {
    if (pthread_create(&ids[t], NULL, worker, (void*)t) != 0) return 1;
  }
  for (long t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  return 0;
}
