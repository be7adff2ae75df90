// The crash handler itself (see crash_handler.h). Signal-safe: only raw system calls, sigaction (async-signal-safe
// by POSIX) to restore dispositions, static buffers, the formats library's allocation-free core.
#include <errno.h>
#include <signal.h>

#include "atomic.h"
#include "crash_handler.h"
#include "module_map.h"
#include "raw_syscall.h"
#include "runtime_state.h"
#include "sections/core/base64.h"
#include "sections/core/cbf.h"
#include "sections/core/char_buffer.h"
#include "sections/core/markup_writer.h"
#include "settings.h"
#include "stack_walk.h"

namespace sampler::runtime {

// Shared with crash_install.cpp.
struct sigaction g_previous_actions[NSIG];
bool g_installed[NSIG];
int g_deferred_signal = 0;

void raise_deferred_signal() {
  const int signal = g_deferred_signal;
  if (signal == 0) return;
  g_deferred_signal = 0;
  // Not blocked here (the writer is not in a handler): the handler runs at once, on this thread, with the report's
  // text ending at a line boundary, and ends the process as the signal would have.
  sys::tgkill(sys::getpid(), sys::gettid(), signal);
}

namespace {

/// The thread writing the crash report, or kCrashDone once written (0: no crash yet).
constexpr pid_t kCrashDone = -1;
pid_t g_crash_owner = 0;
int g_crash_signal = 0;

/// How long a second crashing thread waits for the first one's report.
constexpr int kWaitSteps = 3000;
constexpr long kWaitStepNanoseconds = 1000000;  // 1 ms

char g_report_buffer[32 * 1024];
CapturedStack g_stack;
uint8_t g_cbf[cbf::max_encoded_size(cbf::WordSize::k64, kMaxFrames)];
char g_base64[base64::encoded_size(sizeof g_cbf)];

bool is_fault_signal(int signal) {
  return signal == SIGSEGV || signal == SIGBUS || signal == SIGFPE || signal == SIGILL;
}

/// A fault the kernel raised because of the interrupted instruction: returning from the handler executes it
/// again, which raises the signal again under the restored disposition (the program's own handler then sees the
/// genuine siginfo, and a core dump shows the faulting instruction).
bool is_synchronous_fault(int signal, const siginfo_t* info) {
  return is_fault_signal(signal) && info != nullptr && info->si_code > 0;
}

bool has_program_handler(int signal) {
  const struct sigaction& previous = g_previous_actions[signal];
  if (previous.sa_flags & SA_SIGINFO) return true;
  return previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN;
}

void restore_previous(int signal) {
  if (signal > 0 && signal < NSIG && g_installed[signal]) {
    sigaction(signal, &g_previous_actions[signal], nullptr);
    g_installed[signal] = false;
  }
}

void unblock(int signal) {
  uint64_t set = uint64_t{1} << (signal - 1);
  sys::call(SYS_rt_sigprocmask, 1 /* SIG_UNBLOCK */, reinterpret_cast<long>(&set), 0, 8);
}

/// Hands the signal to the disposition the program had: return into a synchronous fault, re-raise otherwise.
void redeliver(int signal, const siginfo_t* info) {
  restore_previous(signal);
  if (is_synchronous_fault(signal, info)) return;
  // SIGTRAP from int3 reports the address after the trap, so it is re-raised rather than re-executed, as are
  // signals sent by kill() or raise() (SIGABRT, SIGTERM...). Blocked during the handler (SIGTERM and SIGINT are in
  // its mask), it is delivered when the handler returns; unblocked, at once.
  sys::tgkill(sys::getpid(), sys::gettid(), signal);
}

/// A crash while this thread was writing the crash report: take the original signal's default action now.
void die_from_nested_crash(int signal) {
  int original = g_crash_signal != 0 ? g_crash_signal : signal;
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigaction(original, &default_action, nullptr);
  sigaction(signal, &default_action, nullptr);
  unblock(original);
  sys::tgkill(sys::getpid(), sys::gettid(), original);
  // Still alive (the original default action is to ignore? never for our signals): return into the nested
  // fault with its default action restored.
  unblock(signal);
}

void write_signal_line(ReportWriter& out, int signal, const siginfo_t* info) {
  char storage[128];
  CharBuffer line(storage, sizeof storage);
  line.append("signal:");
  line.append_decimal(static_cast<uint64_t>(signal));
  line.append(':');
  const char* name = signal_name(signal);
  line.append(name != nullptr ? name : "UNKNOWN");
  if (is_fault_signal(signal) && info != nullptr) {
    line.append(':');
    markup::append_address(line, reinterpret_cast<uintptr_t>(info->si_addr));
  }
  out.append(line.data(), line.size());
  out.end_line();
}

void write_stack_line(ReportWriter& out, const void* ucontext) {
  capture_stack(ucontext, g_stack);
  size_t size = cbf::encode(sizeof(void*) == 8 ? cbf::WordSize::k64 : cbf::WordSize::k32, g_stack.frames,
                            g_stack.count, g_stack.truncated, g_cbf, sizeof g_cbf);
  if (size == 0) return;
  size_t length = base64::encode(g_cbf, size, g_base64, sizeof g_base64);
  out.append("cbf:");
  out.append(g_base64, length);
  out.end_line();
}

void write_crash_report(int signal, const siginfo_t* info, const void* ucontext) {
  sys::SigpipeGuard guard;
  ReportWriter out(g_report_buffer, sizeof g_report_buffer, descriptor_sink(&g_report.fd));
  // The samples subreport, or nothing more of it if the exit-time writer had just ended it (then the
  // main-backtrace still follows: the crash wins).
  if (!write_crash_samples(out)) return;
  // Flushed at each step: if a later step faults, what came before is on disk, and readers accept a final
  // subreport cut short (docs/formats.md section 3).
  out.flush();
  out.append("<report id=\"main-backtrace\">");
  out.end_line();
  if (read_mappings()) write_module_markup(out);
  write_signal_line(out, signal, info);
  out.flush();
  write_stack_line(out, ucontext);
  out.append("</report>");
  out.end_line();
  out.flush();
  if (verbose()) {
    char number[4];
    size_t n = format_decimal(static_cast<uint64_t>(signal), number, sizeof number - 1);
    number[n] = '\0';
    say("signal ", number, " (", signal_name(signal), "): crash report written");
  }
}

void handle_crash(int signal, siginfo_t* info, void* ucontext) {
  int saved_errno = errno;
  if ((signal == SIGTERM || signal == SIGINT) && has_program_handler(signal)) {
    // The program's own handler decides what this signal means (it may well not end the process): not a crash.
    // It is passed on without touching the crash state, so the one crash report stays for a real crash later.
    redeliver(signal, info);
    errno = saved_errno;
    return;
  }
  pid_t self = sys::gettid();
  if ((signal == SIGTERM || signal == SIGINT) && load_acquire(&g_report.lock_owner) == self &&
      g_report.writer != nullptr && g_report.writer->flushing()) {
    // This thread was writing the report (exit, dlclose) and a write is under way: how much of it reached the
    // destination cannot be known from here, and writing now would cut a line in two. The writer goes on (its
    // write is retried) and raises the signal again once the flush is complete (raise_deferred_signal).
    g_deferred_signal = signal;
    errno = saved_errno;
    return;
  }
  pid_t expected = 0;
  // Sequentially consistent, as are the exit-time writer's "finished, then is a crash under way?" (report.cpp) and
  // the crash path's reading of "finished" (crash_samples_signal_safe.cpp): one of the two sees the other.
  if (!__atomic_compare_exchange_n(&g_crash_owner, &expected, self, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    if (expected == self) {
      die_from_nested_crash(signal);
    } else {
      // Another thread is writing the report: it ends the process when done. Wait for it (bounded), then do
      // what the program would have done with this signal.
      for (int step = 0; step < kWaitSteps && load_acquire(&g_crash_owner) != kCrashDone; ++step) {
        sys::nanosleep(kWaitStepNanoseconds);
      }
      redeliver(signal, info);
    }
    errno = saved_errno;
    return;
  }
  g_crash_signal = signal;
  write_crash_report(signal, info, ucontext);
  store_release(&g_crash_owner, kCrashDone);
  redeliver(signal, info);
  errno = saved_errno;
}

}  // namespace

bool crash_under_way_elsewhere() {
  const pid_t owner = __atomic_load_n(&g_crash_owner, __ATOMIC_SEQ_CST);  // see handle_crash
  // kCrashDone (-1) is not "under way": that report is written, and the program may have survived the crash.
  return owner > 0 && owner != sys::gettid();
}

void wait_for_crash_to_end_process() {
  // The crash handler's own bounds: 2 s for the registry lock (crash_samples_signal_safe.cpp), then the writing.
  for (int step = 0; step < 2 * kWaitSteps && load_acquire(&g_crash_owner) > 0; ++step) {
    sys::nanosleep(kWaitStepNanoseconds);
  }
  // Written: the crashing thread redelivers its signal, which ends the process at once, unless the program's own
  // handler survives it.
  for (int step = 0; step < 1000; ++step) sys::nanosleep(kWaitStepNanoseconds);
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return nullptr;
  }
}

/// The handler installed for every crash signal (crash_install.cpp).
void crash_signal_handler(int signal, siginfo_t* info, void* ucontext) { handle_crash(signal, info, ucontext); }

}  // namespace sampler::runtime
