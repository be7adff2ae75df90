/* Example 1: a C program instrumented by hand through <sampler/sampler.h>, with every counter scheme of
 * docs/formats.md section 2, bounds, and first/last timestamps.
 *
 *   sampler-example run N         runs the workload N times (the site counts are closed-form in N: see
 *                                 tests/runtime, which checks them exactly at SAMPLER_SPARSITY=1)
 *   sampler-example crash KIND    runs the workload 1000 times, then crashes (crash.h: segv bus fpe ill abrt
 *                                 trap term int overflow thread)
 *   sampler-example fork N [crash]  runs the workload N times, then forks a child that runs it N more times and
 *                                 reaches a site of its own, then exits (or crashes with SIGSEGV); the parent
 *                                 waits for it and exits normally. The report must be the parent's alone.
 *   sampler-example finish N      runs the workload N times, calls sampler_finish_report(), then leaves with
 *                                 _exit(0) (no exit handlers run)
 *   sampler-example crash-in-report N   runs the workload N times, damages its own unit's tables, then crashes
 *                                 with SIGSEGV: the crash handler faults while writing the report and must
 *                                 still end the process with SIGSEGV, without hanging
 *   sampler-example env -         prints the SAMPLER_* variables it can see (the runtime removed them)
 * Built twice from this source: instrumented (sampler-example) and with SAMPLER_UNINSTRUMENTED
 * (sampler-example-uninstrumented), the baseline whose exit status the instrumented one must match.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sampler/sampler.h>

#include "crash.h"

/* A scheme of our own: a generic 5-tuple. */
#define SAMPLER_SCHEME_NAME_example_tuple "example-tuple"
#define SAMPLER_COLUMNS_example_tuple 5

#define SAMPLER_UNIT_SIGNATURE "5a3d1c0e9b8f47d2a6c4e1f0b3d5a7c9"
#define EXAMPLE_SITES(SCHEME, SITE, BOUND, END)                                                                 \
  SCHEME(function_entries, none)                                                                                \
    SITE(work_entry, "sampler_example.c", "103", "work", "0")                                                   \
    SITE(never_entry, "sampler_example.c", "130", "never_called", "0")                                          \
  END(function_entries)                                                                                         \
  SCHEME(branches, both)                                                                                        \
    SITE(is_even, "sampler_example.c", "104", "work", "1", "i % 2 == 0")                                        \
    SITE(is_multiple_of_3, "sampler_example.c", "105", "work", "2", "i % 3 == 0")                               \
    SITE(never_branch, "sampler_example.c", "131", "never_called", "1", "i < 0")                                \
  END(branches)                                                                                                 \
  SCHEME(returns, none)                                                                                         \
    SITE(compare_to_ten, "sampler_example.c", "107", "work", "3", "compare_to_ten")                             \
  END(returns)                                                                                                  \
  SCHEME(scalar_pairs, none)                                                                                    \
    SITE(i_vs_half, "sampler_example.c", "109", "work", "4", "i", "local", "direct", "half", "local")           \
  END(scalar_pairs)                                                                                             \
  SCHEME(float_kinds, last)                                                                                     \
    SITE(special_value, "sampler_example.c", "111", "work", "5", "x", "local", "direct")                        \
    SITE(float_value, "sampler_example.c", "113", "work", "6", "f", "local", "direct")                          \
  END(float_kinds)                                                                                              \
  SCHEME(atoms, none)                                                                                           \
    SITE(shared_write, "sampler_example.c", "115", "work", "7", "example_shared", "write")                      \
  END(atoms)                                                                                                    \
  SCHEME(g_object_unref, none)                                                                                  \
    SITE(unref, "sampler_example.c", "116", "work", "8", "object")                                              \
  END(g_object_unref)                                                                                           \
  SCHEME(coverage, none)                                                                                        \
    SITE(loop_body, "sampler_example.c", "117", "work", "9")                                                    \
    SITE(child_only, "sampler_example.c", "165", "main", "0")                                                   \
  END(coverage)                                                                                                 \
  SCHEME(data, none)                                                                                            \
    SITE(data_seen, "sampler_example.c", "118", "work", "10")                                                   \
  END(data)                                                                                                     \
  SCHEME(example_tuple, none)                                                                                   \
    SITE(residue, "sampler_example.c", "119", "work", "11", "i % 5")                                            \
  END(example_tuple)                                                                                            \
  SCHEME(bounds, first)                                                                                         \
    BOUND(shifted, SAMPLER_BOUND_I32, "sampler_example.c", "121", "work", "12", "shifted", "local", "direct")   \
    BOUND(byte, SAMPLER_BOUND_U8, "sampler_example.c", "123", "work", "13", "byte", "local", "direct")          \
    BOUND(cursor, SAMPLER_BOUND_POINTER, "sampler_example.c", "125", "work", "14", "cursor", "local", "direct") \
    BOUND(unused, SAMPLER_BOUND_I16, "sampler_example.c", "133", "never_called", "2", "v", "local", "direct")   \
  END(bounds)
SAMPLER_DEFINE_UNIT(EXAMPLE_SITES);

int example_shared;
static int example_array[4];

static int compare_to_ten(int i) { return i - 10; }

/* The nine float kinds in the scheme's column order (sampler_float_kind). */
static double special_value(int k) {
  switch (k) {
    case 0: return -INFINITY;
    case 1: return -1.5;
    case 2: return -4.9e-324;
    case 3: return -0.0;
    case 4: return NAN;
    case 5: return 0.0;
    case 6: return 4.9e-324;
    case 7: return 2.5;
    default: return INFINITY;
  }
}

static void work(int i, int n) {
  SAMPLER_FUNCTION_ENTRY(work_entry);
  if (SAMPLER_BRANCH(is_even, i % 2 == 0)) example_shared += 1;
  if (SAMPLER_BRANCH(is_multiple_of_3, i % 3 == 0)) example_shared += 2;
  int r = compare_to_ten(i);
  SAMPLER_RETURN(compare_to_ten, r);
  int half = n / 2;
  SAMPLER_SCALAR_PAIR(i_vs_half, i, half);
  double x = special_value(i % 9);
  SAMPLER_FLOAT_KIND(special_value, x);
  float f = (float)(i % 3) * 1e-39f; /* 0, then float subnormals: a float's own kind, not a double's */
  SAMPLER_FLOAT_KIND(float_value, f);
  example_shared = i;
  SAMPLER_ATOM(shared_write, &example_shared);
  SAMPLER_G_OBJECT_UNREF(unref, i % 4 != 3, i % 4);
  SAMPLER_COVERAGE(loop_body);
  SAMPLER_DATA(data_seen);
  SAMPLER_TUPLE(example_tuple, residue, i % 5);
  int shifted = i - 5;
  SAMPLER_BOUND(shifted, shifted);
  unsigned char byte = (unsigned char)(i * 7);
  SAMPLER_BOUND(byte, byte);
  int* cursor = &example_array[i % 4];
  SAMPLER_BOUND(cursor, cursor);
}

/* Never called: its sites must report zero counts and untouched bounds. */
__attribute__((unused)) static void never_called(int i) {
  SAMPLER_FUNCTION_ENTRY(never_entry);
  if (SAMPLER_BRANCH(never_branch, i < 0)) example_shared = 0;
  short v = (short)i;
  SAMPLER_BOUND(unused, v);
}

static void run(int n) {
  for (int i = 0; i < n; ++i) work(i, n);
}

static int usage(void) {
  fprintf(stderr, "usage: sampler-example run N | crash KIND | fork N [crash] | finish N | crash-in-report N | "
                  "env -\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  if (strcmp(argv[1], "run") == 0) {
    run(atoi(argv[2]));
    return 0;
  }
  if (strcmp(argv[1], "crash") == 0) {
    run(1000);
    if (example_crash(argv[2]) != 0) return usage();
    return 0;
  }
  if (strcmp(argv[1], "fork") == 0) {
    int n = atoi(argv[2]);
    run(n);
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      run(n);
      for (int i = 0; i < n; ++i) SAMPLER_COVERAGE(child_only);
      if (argc > 3 && strcmp(argv[3], "crash") == 0) example_crash("segv");
      exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("child %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return 0;
  }
  if (strcmp(argv[1], "finish") == 0) {
    run(atoi(argv[2]));
#ifndef SAMPLER_UNINSTRUMENTED
    sampler_finish_report();
#endif
    _exit(0);
  }
  if (strcmp(argv[1], "crash-in-report") == 0) {
    run(atoi(argv[2]));
#ifndef SAMPLER_UNINSTRUMENTED
    /* A wild write into the unit's tables, of the kind a memory bug makes. */
    sampler_unit_schemes[0].values = (uint64_t*)(uintptr_t)16;
#endif
    example_crash("segv");
    return 0;
  }
  if (strcmp(argv[1], "env") == 0) {
    extern char** environ;
    for (char** e = environ; *e != NULL; ++e) {
      if (strncmp(*e, "SAMPLER_", 8) == 0) printf("%s\n", *e);
    }
    return 0;
  }
  return usage();
}
