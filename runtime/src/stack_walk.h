// The crashing thread's stack, for the cbf: line of a main-backtrace subreport (docs/formats.md section 3.2).
//
// Frame 0 is the interrupted instruction (the pc in the signal's ucontext); the callers are return addresses;
// no frame of the signal handler appears. The walk uses the DWARF call-frame information through libgcc's
// _Unwind_Backtrace, which steps through the kernel's signal frame into the interrupted code and needs no frame
// pointers (so it also walks through libc frames, e.g. from abort() back into the program). With glibc >= 2.35
// libgcc finds unwind tables with _dl_find_object, which takes no lock; the unwinder is primed at start-up so that
// its one-time initialisation and lazy binding never happen in the crash path. If the unwinder cannot reach the
// interrupted frame, a frame-pointer walk from the ucontext takes over, every pointer checked against the
// readable mappings. Both are bounded by the capture limit; a deeper stack ends in `trunc`.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sections/core/cbf.h"

namespace sampler::runtime {

/// The capture limit: frames kept before the stack is declared truncated.
constexpr size_t kMaxFrames = 512;

struct CapturedStack {
  cbf::Frame frames[kMaxFrames];
  size_t count = 0;
  bool truncated = false;
  bool from_unwinder = false;  ///< false: the frame-pointer walk produced it
};

/// The interrupted pc of a signal handler's ucontext.
uint64_t context_pc(const void* ucontext);

/// Captures the stack interrupted by the signal whose handler received `ucontext`. Signal-safe. The
/// frame-pointer fallback needs read_mappings() to have run (it checks pointers against the mappings).
void capture_stack(const void* ucontext, CapturedStack& out);

/// Runs the unwinder once so that its initialisation and symbol binding happen now, not in the crash path.
void prime_unwinder();

}  // namespace sampler::runtime
