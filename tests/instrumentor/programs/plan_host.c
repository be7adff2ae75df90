/* Sampling plans in a dlopen()ed unit (tests/instrumentor/plan_test.sh, case plugin): loads PLUGIN, calls its
 * plan_plugin_step() N times, unloads it (its unit unregisters, its samples go into the report), LOADS times.
 * Built with or without instrumentation: without, the plugin brings the runtime in at its first dlopen.
 * usage: plan_host PLUGIN LOADS N */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: plan_host PLUGIN LOADS N\n");
    return 2;
  }
  int loads = atoi(argv[2]), n = atoi(argv[3]);
  long total = 0;
  for (int load = 0; load < loads; ++load) {
    void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (plugin == NULL) {
      fprintf(stderr, "plan_host: %s\n", dlerror());
      return 1;
    }
    long (*step)(long, int) = (long (*)(long, int))dlsym(plugin, "plan_plugin_step");
    if (step == NULL) {
      fprintf(stderr, "plan_host: %s\n", dlerror());
      return 1;
    }
    for (int i = 0; i < n; ++i) total = step(total, i);
    if (dlclose(plugin) != 0) {
      fprintf(stderr, "plan_host: %s\n", dlerror());
      return 1;
    }
  }
  printf("%ld\n", total);
  return 0;
}
