// Installing the crash handler (see crash_handler.h). Start-up code: runs once, single-threaded.
#include <signal.h>
#include <sys/mman.h>

#include "crash_handler.h"
#include "module_map.h"
#include "runtime_state.h"
#include "settings.h"
#include "stack_walk.h"

namespace sampler::runtime {

extern struct sigaction g_previous_actions[NSIG];
extern bool g_installed[NSIG];
void crash_signal_handler(int signal, siginfo_t* info, void* ucontext);

namespace {

const int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGTERM, SIGINT};

/// Large enough for the unwinder and the report writer's frames; the report's big buffers are static.
constexpr size_t kAlternateStackSize = 128 * 1024;

/// Gives the calling thread an alternate signal stack unless it has one: a stack overflow leaves no room on the
/// thread's own stack for the handler. The mapping has a guard page below it.
void install_alternate_stack(uint64_t page_size) {
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;  // the program's own
  size_t size = kAlternateStackSize + page_size;
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return;
  mprotect(memory, page_size, PROT_NONE);
  stack_t stack{};
  stack.ss_sp = static_cast<char*>(memory) + page_size;
  stack.ss_size = kAlternateStackSize;
  stack.ss_flags = 0;
  if (sigaltstack(&stack, nullptr) != 0) munmap(memory, size);
}

}  // namespace

void install_crash_handlers(uint64_t page_size) {
  set_page_size(page_size);
  prime_unwinder();
  install_alternate_stack(page_size);
  for (int signal : kCrashSignals) {
    struct sigaction previous {};
    if (sigaction(signal, nullptr, &previous) != 0) continue;
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) {
      // Ignored when the program started (nohup, a shell's background job): it stays ignored.
      if (verbose()) say("leaving ignored signal ", signal_name(signal), " alone");
      continue;
    }
    struct sigaction action {};
    action.sa_sigaction = crash_signal_handler;
    // SA_NODEFER: a fault inside the handler re-enters it (and is turned into the original signal's default
    // action) instead of killing the process with a blocked synchronous signal. SIGTERM and SIGINT wait until
    // the handler is done.
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGTERM);
    sigaddset(&action.sa_mask, SIGINT);
    if (sigaction(signal, &action, &g_previous_actions[signal]) == 0) g_installed[signal] = true;
  }
}

}  // namespace sampler::runtime
