// Installing the crash handler (see crash_handler.h). Start-up code: runs once, single-threaded; and each
// thread's first entry into the runtime (its alternate signal stack).
#include <pthread.h>
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

uint64_t g_page_size = 4096;
/// The key whose destructor frees a thread's alternate stack at its exit; valid when g_thread_stacks is set.
pthread_key_t g_stack_key;
bool g_thread_stacks = false;

/// Gives the calling thread an alternate signal stack unless it has one: a stack overflow leaves no room on the
/// thread's own stack for the handler. The mapping has a guard page below it. Returns the mapping, or nullptr if
/// none was installed (the thread has one already, or there is no memory for it).
void* install_alternate_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return nullptr;  // one already
  size_t size = kAlternateStackSize + g_page_size;
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  mprotect(memory, g_page_size, PROT_NONE);
  stack_t stack{};
  stack.ss_sp = static_cast<char*>(memory) + g_page_size;
  stack.ss_size = kAlternateStackSize;
  stack.ss_flags = 0;
  if (sigaltstack(&stack, nullptr) != 0) {
    munmap(memory, size);
    return nullptr;
  }
  return memory;
}

/// The key's destructor, at the exit of a thread that got an alternate stack at its first entry: the stack is
/// disabled (if it is still the thread's: the program may have installed its own since) and unmapped.
void free_alternate_stack(void* memory) {
  char* base = static_cast<char*>(memory) + g_page_size;
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE) &&
      static_cast<char*>(current.ss_sp) == base) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    if (sigaltstack(&off, nullptr) != 0) return;  // in use (cannot be, at thread exit): leave it mapped
  }
  munmap(memory, kAlternateStackSize + g_page_size);
}

}  // namespace

void prepare_thread_for_crashes() {
  if (!g_thread_stacks) return;
  void* memory = install_alternate_stack();
  // Should the key refuse the value, the stack stays until the thread ends, and its mapping after that.
  if (memory != nullptr) pthread_setspecific(g_stack_key, memory);
}

void install_crash_handlers(uint64_t page_size) {
  set_page_size(page_size);
  g_page_size = page_size;
  prime_unwinder();
  // The initialising thread's stack is never freed: normally the main thread, whose end is the process's.
  install_alternate_stack();
  g_thread_stacks = pthread_key_create(&g_stack_key, free_alternate_stack) == 0;
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
