// Input generator for the resolve-backtrace benchmark (bench/tools/resolve_bench.sh): writes a report of STACKS
// main-backtrace subreports, each with a module map, a signal line and a CBF stack of FRAMES frames, encoded by
// the same core encoder the runtime's crash handler uses. Deterministic (a fixed xorshift seed).
//
//   make_backtrace_report STACKS FRAMES > report
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sections/core/base64.h"
#include "sections/core/cbf.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_backtrace_report STACKS FRAMES\n");
    return 2;
  }
  const unsigned long stacks = std::strtoul(argv[1], nullptr, 10);
  const unsigned long frames_per_stack = std::strtoul(argv[2], nullptr, 10);
  uint64_t state = 0x9e3779b97f4a7c15u;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  using namespace sampler;
  std::vector<cbf::Frame> frames(frames_per_stack);
  std::vector<uint8_t> bytes(cbf::max_encoded_size(cbf::WordSize::k64, frames_per_stack));
  std::string text(base64::encoded_size(bytes.size()), '\0');
  for (unsigned long s = 0; s < stacks; ++s) {
    // Code in an executable and in libc: deltas of 1 to 6 bytes, as in real stacks.
    for (unsigned long f = 0; f < frames_per_stack; ++f) {
      uint64_t base = next() % 4 == 0 ? 0x7ffff7a00000u : 0x555555554000u;
      frames[f] = {f == 0 ? cbf::FrameKind::kPc : cbf::FrameKind::kRa, base + next() % 0x200000};
    }
    size_t size = cbf::encode(cbf::WordSize::k64, frames.data(), frames.size(), false, bytes.data(), bytes.size());
    size_t length = base64::encode(bytes.data(), size, text.data(), text.size());
    std::printf("<report id=\"main-backtrace\">\n{{{reset}}}\n{{{module:0:app:elf:0123456789abcdef}}}\n"
                "{{{mmap:0x555555554000:0x200000:load:0:rx:0x00}}}\n"
                "{{{module:1:libc.so.6:elf:fedcba9876543210}}}\n"
                "{{{mmap:0x7ffff7a00000:0x200000:load:1:rx:0x00}}}\nsignal:11:SIGSEGV:0x10\ncbf:%.*s\n</report>\n",
                static_cast<int>(length), text.data());
  }
  return 0;
}
