// Crash groups by raw stacks: a crash's signature is its signal and its top frames as module-relative addresses,
// so that runs of one binary group together whatever its load addresses. analysis/crash_symbols.h names the same
// frames by function and line when symbols are known, and uses the pieces below to skip and join them alike.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sampler::analysis {

/// The signature of a crash from a main-backtrace body (docs/formats.md section 3): the signal name, then the top
/// `frames` frames of the CBF stack as MODULE+0xOFFSET (module-relative, from the module and mmap elements, so
/// no symbolizer is needed and address-space randomisation does not split groups), or the legacy
/// backtrace_symbols lines as they are. "" when the body has neither stack.
std::string crash_signature(std::string_view body, size_t frames);

/// True for libraries whose frames at the top of a stack say where a crash was raised, not which code caused it
/// (libc, the dynamic loader, libstdc++, the sanitizers, the sampler's runtime): signatures skip them.
bool is_system_library(std::string_view name);

/// The signal name of a main-backtrace line "signal:NUMBER:NAME" (the line starts with "signal:").
std::string signal_name(std::string_view line);

/// The most frames in system libraries skipped at the top of a stack, so that abort() or a libc function does not
/// put every stack that goes through it into one group: a signature starts at the program's own code.
inline constexpr size_t kMaxSkippedFrames = 16;

/// The stack of a signature: the first `frames` of `top` (each its text, and whether it is in a system library),
/// after the leading system ones (all kept when all are), joined by " < ", then " (after N frames in system
/// libraries)" when N were skipped.
std::string join_top_frames(const std::vector<std::pair<std::string, bool>>& top, size_t frames);

}  // namespace sampler::analysis
