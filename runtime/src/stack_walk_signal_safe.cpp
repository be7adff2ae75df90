// Capturing the interrupted stack (see stack_walk.h). Signal-safe: libgcc's unwinder (primed at start-up, no
// lock with _dl_find_object), or a bounded frame-pointer walk over checked memory.
#include "stack_walk.h"

#include <signal.h>
#include <ucontext.h>
#include <unwind.h>

#include "module_map.h"

namespace sampler::runtime {
namespace {

/// Frames of the handler and the kernel's signal trampoline allowed before the interrupted one is found.
constexpr int kMaxHandlerFrames = 64;

struct UnwindState {
  uint64_t pc;
  CapturedStack* out;
  bool found;
  int skipped;
};

_Unwind_Reason_Code on_frame(struct _Unwind_Context* context, void* argument) {
  UnwindState& state = *static_cast<UnwindState*>(argument);
  int before_instruction = 0;
  uint64_t ip = _Unwind_GetIPInfo(context, &before_instruction);
  CapturedStack& out = *state.out;
  if (!state.found) {
    // The signal frame reports the interrupted pc itself (not a return address): that is frame 0. Everything
    // before it is the handler's own frames, which the report must not show.
    if (before_instruction != 0 && ip == state.pc) {
      state.found = true;
      out.frames[out.count++] = cbf::Frame{cbf::FrameKind::kPc, ip};
      return _URC_NO_REASON;
    }
    return ++state.skipped > kMaxHandlerFrames ? _URC_END_OF_STACK : _URC_NO_REASON;
  }
  if (ip == 0) return _URC_END_OF_STACK;
  if (out.count == kMaxFrames) {
    out.truncated = true;
    return _URC_END_OF_STACK;
  }
  // A frame below another signal frame is again an exact pc (async frames print as pc, docs/formats.md section 3.2).
  out.frames[out.count++] = cbf::Frame{before_instruction != 0 ? cbf::FrameKind::kPc : cbf::FrameKind::kRa, ip};
  return _URC_NO_REASON;
}

_Unwind_Reason_Code count_frames(struct _Unwind_Context*, void* argument) {
  ++*static_cast<int*>(argument);
  return _URC_NO_REASON;
}

struct Registers {
  uint64_t pc;
  uint64_t sp;
  uint64_t fp;
};

Registers context_registers(const void* ucontext) {
  const ucontext_t* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
  return Registers{static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]),
                   static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RSP]),
                   static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RBP])};
#elif defined(__aarch64__)
  return Registers{uc->uc_mcontext.pc, uc->uc_mcontext.sp, uc->uc_mcontext.regs[29]};
#elif defined(__i386__)
  return Registers{static_cast<uint32_t>(uc->uc_mcontext.gregs[REG_EIP]),
                   static_cast<uint32_t>(uc->uc_mcontext.gregs[REG_ESP]),
                   static_cast<uint32_t>(uc->uc_mcontext.gregs[REG_EBP])};
#else
#error "sampler: no ucontext register access for this architecture"
#endif
}

/// Frame records are {previous frame pointer, return address} on x86-64, i386 and AArch64.
void walk_frame_pointers(const Registers& registers, CapturedStack& out) {
  out.count = 0;
  out.truncated = false;
  out.from_unwinder = false;
  out.frames[out.count++] = cbf::Frame{cbf::FrameKind::kPc, registers.pc};
  const uint64_t word = sizeof(void*);
  uint64_t fp = registers.fp;
  // The frame chain must stay on the interrupted thread's stack, which grows down: every record lies above the
  // stack pointer and above the previous record.
  const Mapping* stack = find_mapping(registers.sp);
  uint64_t low = registers.sp;
  uint64_t high = stack != nullptr ? stack->end : 0;
  uintptr_t record[2];
  while (fp >= low && fp + 2 * word <= high && fp % word == 0 && read_memory(fp, record, sizeof record)) {
    uint64_t next = record[0];
    uint64_t return_address = record[1];
    if (return_address == 0) break;
    if (out.count == kMaxFrames) {
      out.truncated = true;
      break;
    }
    out.frames[out.count++] = cbf::Frame{cbf::FrameKind::kRa, return_address};
    if (next <= fp) break;
    low = fp + 2 * word;
    fp = next;
  }
}

}  // namespace

uint64_t context_pc(const void* ucontext) { return context_registers(ucontext).pc; }

void capture_stack(const void* ucontext, CapturedStack& out) {
  const Registers registers = context_registers(ucontext);
  out.count = 0;
  out.truncated = false;
  UnwindState state{registers.pc, &out, false, 0};
  _Unwind_Backtrace(on_frame, &state);
  if (state.found) {
    out.from_unwinder = true;
    return;
  }
  walk_frame_pointers(registers, out);
}

void prime_unwinder() {
  int frames = 0;
  _Unwind_Backtrace(count_frames, &frames);
}

}  // namespace sampler::runtime
