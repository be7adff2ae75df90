// Symbolizer markup writer (LLVM's Symbolizer Markup Format), allocation-free.
//
// Writes single markup elements into a CharBuffer, without a trailing newline. Addresses (%p) are written as
// 0x followed by an even number of lower-case hex digits; sizes and module-relative addresses likewise.
// Part of the formats library's core (no C++ standard library, async-signal-safe): the runtime's crash handler
// writes the module map of a main-backtrace subreport with it, resolve-backtrace its bt lines.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sections/core/char_buffer.h"

namespace sampler::markup {

/// The optional suffix of bt and pc elements.
enum class CodeKind : uint8_t { kUnknown, kPc, kRa };

/// Appends `value` as %p: "0x" and an even number (at least 2) of lower-case hex digits.
void append_address(CharBuffer& out, uint64_t value);

/// {{{reset}}}
void write_reset(CharBuffer& out);
/// {{{module:ID:NAME:elf:BUILDID}}}. NAME has every ':' and '}' (and control character) replaced by '_'.
/// build_id must be non-empty (llvm-symbolizer rejects an empty one; nothing is written then); it is written
/// as lower-case hex, two digits per byte. The ID is written in decimal.
void write_module(CharBuffer& out, uint64_t id, const char* name, size_t name_length, const uint8_t* build_id,
                  size_t build_id_length);
/// {{{mmap:START:SIZE:load:MODULE:FLAGS:VADDR}}}. flags (NUL-terminated, may be null) is a combination of
/// 'r', 'w', 'x'; they are written lower-case in that order and other characters are ignored. START, SIZE
/// and VADDR are written like append_address().
void write_mmap(CharBuffer& out, uint64_t start, uint64_t size, uint64_t module_id, const char* flags,
                uint64_t module_relative_address);
/// {{{bt:FRAME:ADDRESS}}} or {{{bt:FRAME:ADDRESS:pc|ra}}}
void write_bt(CharBuffer& out, uint64_t frame, uint64_t address, CodeKind kind);
/// {{{pc:ADDRESS}}} or {{{pc:ADDRESS:pc|ra}}}
void write_pc(CharBuffer& out, uint64_t address, CodeKind kind);

}  // namespace sampler::markup
