// libsampler's entry points: initialisation at start-up, the report at exit, registration, fork handling.
#include <pthread.h>
#include <sys/auxv.h>

#include "atomic.h"
#include "crash_handler.h"
#include "raw_syscall.h"
#include "runtime_state.h"
#include "sampler/abi.h"
#include "sampling.h"
#include "settings.h"

namespace sampler::runtime {
namespace {

enum : int { kNotInitialized = 0, kInitializing = 1, kInitialized = 2 };
int g_init_state = kNotInitialized;
pid_t g_initializer = 0;  // the thread running initialize()

/// A forked child shares the parent's report destination but must never write to it (docs/instrumenting.md section 2):
/// its pid differs from the report's, which every write checks. The registry lock may have been held by a thread that
/// does not exist in the child: free it. The child's copy of the report's descriptor (the runtime's own, never
/// one of the program's) is closed: a long-lived child must not keep the report file's lock (settings.h).
void after_fork_in_child() {
  if (g_report.fd >= 0) {
    sys::close(g_report.fd);
    g_report.fd = -1;
  }
  store_release(&g_report.lock_owner, pid_t{0});
  store_relaxed(&g_interim_due, uint64_t{0});
  detach_shared_counters();
}

void initialize() {
  Settings settings = load_settings(getauxval(AT_SECURE) != 0);
  g_verbose = settings.verbose;
  configure_sampling(settings.sampling, settings.sparsity, settings.seeded, settings.seed);
  if (settings.plan) configure_plan_clock();
  open_report(settings.report_fd, settings.report_path);
  if (settings.interval_seconds != 0) start_interval(settings.interval_seconds);
  open_shared_counters(settings.shared_base, settings.shared_size, settings.counters_path, settings.counters_fd);
  if (settings.report_fd >= 0) {
    unsigned long page_size = getauxval(AT_PAGESZ);
    install_crash_handlers(page_size != 0 ? page_size : 4096);
  }
  if (settings.report_fd >= 0 || g_report.shared.base != nullptr) pthread_atfork(nullptr, nullptr, after_fork_in_child);
}

}  // namespace

bool ensure_initialized() {
  if (load_acquire(&g_init_state) == kInitialized) return true;
  int expected = kNotInitialized;
  if (compare_exchange(&g_init_state, expected, int{kInitializing})) {
    store_release(&g_initializer, sys::gettid());
    initialize();
    store_release(&g_init_state, int{kInitialized});
    return true;
  }
  // Another thread is initialising: wait for it (bounded). This thread re-entering from initialisation itself
  // goes on at once, uninitialised, rather than wait for itself.
  if (load_acquire(&g_initializer) == sys::gettid()) return false;
  for (int spins = 0; spins < 100000 && load_acquire(&g_init_state) != kInitialized; ++spins) sys::sched_yield();
  return load_acquire(&g_init_state) == kInitialized;
}

// Priority 101, the earliest: the settings are in place before the program's constructors run its sites.
__attribute__((constructor(101))) void runtime_constructor() { ensure_initialized(); }

// Runs after the program's own destructors and exit handlers (and, in libsampler.so, after those of every
// object that depends on it), so the report holds everything counted until then.
__attribute__((destructor(101))) void runtime_destructor() { finish_report(); }

}  // namespace sampler::runtime

extern "C" {

SAMPLER_API void sampler_register_unit(sampler_unit* unit) {
  sampler::runtime::ensure_initialized();
  sampler::runtime::register_unit(unit);
}

SAMPLER_API void sampler_unregister_unit(sampler_unit* unit) { sampler::runtime::unregister_unit(unit); }

SAMPLER_API void sampler_finish_report(void) { sampler::runtime::finish_report(); }

SAMPLER_API void sampler_write_report(void) { sampler::runtime::write_interim_report(); }

}  // extern "C"
