/* Example 2, the host: loads an instrumented plugin, calls it, unloads it, several times.
 *
 *   sampler-example-host PLUGIN LOADS N    dlopen(PLUGIN), plugin_work(N + load), dlclose: LOADS times
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <sampler/sampler.h>

#define SAMPLER_UNIT_SIGNATURE "7c6b5a49382716050f1e2d3c4b5a6978"
#define HOST_SITES(SCHEME, SITE, BOUND, END)       \
  SCHEME(coverage, none)                           \
    SITE(load, "plugin_host.c", "26", "main", "1") \
  END(coverage)
SAMPLER_DEFINE_UNIT(HOST_SITES);

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: sampler-example-host PLUGIN LOADS N\n");
    return 2;
  }
  int loads = atoi(argv[2]);
  long n = atol(argv[3]);
  for (int load = 0; load < loads; ++load) {
    SAMPLER_COVERAGE(load);
    void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (plugin == NULL) {
      fprintf(stderr, "sampler-example-host: %s\n", dlerror());
      return 1;
    }
    long (*work)(long) = (long (*)(long))dlsym(plugin, "plugin_work");
    if (work == NULL) {
      fprintf(stderr, "sampler-example-host: %s\n", dlerror());
      return 1;
    }
    printf("load %d: %ld odd\n", load, work(n + load));
    if (dlclose(plugin) != 0) {
      fprintf(stderr, "sampler-example-host: %s\n", dlerror());
      return 1;
    }
  }
  return 0;
}
