/* The torture suite's host: a program that installs SIGSEGV and SIGTERM handlers of its own and only then
 * dlopen()s an instrumented plugin, so libsampler's crash handler is installed after the program's (it must save
 * and chain to them). Never linked to libsampler itself.
 *
 *   torture-host PLUGIN N segv    runs the plugin's work, then faults: the program's handler says so and leaves
 *                                 with _exit(41)
 *   torture-host PLUGIN N term    runs the plugin's work, then raise(SIGTERM): the program's handler asks for a
 *                                 clean shutdown and main returns 43 (exit handlers, and the report, run)
 *   torture-host PLUGIN N term-segv  raise(SIGTERM), handled by the program, which goes on; then it faults: the
 *                                 program's SIGSEGV handler says so and leaves with _exit(41)
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "torture.h"

static volatile sig_atomic_t stop_requested;

static void on_segv(int signal, siginfo_t* info, void* context) {
  (void)signal;
  (void)info;
  (void)context;
  static const char line[] = "torture-host: program handler: SIGSEGV\n";
  ssize_t ignored = write(2, line, sizeof line - 1);
  (void)ignored;
  _exit(41);
}

static void on_term(int signal) {
  (void)signal;
  static const char line[] = "torture-host: program handler: SIGTERM\n";
  ssize_t ignored = write(2, line, sizeof line - 1);
  (void)ignored;
  stop_requested = 1;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: torture-host PLUGIN N segv|term|term-segv\n");
    return 2;
  }
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_segv;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, NULL);
  memset(&action, 0, sizeof action);
  action.sa_handler = on_term;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, NULL);

  void* plugin = dlopen(argv[1], RTLD_NOW);
  if (plugin == NULL) {
    fprintf(stderr, "torture-host: %s\n", dlerror());
    return 1;
  }
  torture_plugin_work_function work = (torture_plugin_work_function)dlsym(plugin, "torture_plugin_work");
  if (work == NULL) return 1;
  work(atol(argv[2]));
  if (strcmp(argv[3], "segv") == 0) {
    torture_fault();
    return 3; /* not reached */
  }
  if (strcmp(argv[3], "term-segv") == 0) {
    raise(SIGTERM);
    if (!stop_requested) return 3;
    torture_fault();
    return 3; /* not reached */
  }
  if (strcmp(argv[3], "term") == 0) {
    raise(SIGTERM);
    return stop_requested ? 43 : 3;
  }
  return 2;
}
