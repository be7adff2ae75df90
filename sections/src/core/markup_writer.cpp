// Symbolizer markup writer (see sections/core/markup_writer.h and LLVM's Symbolizer Markup Format).
// Core code: no C++ standard library, no libc call, no allocation; safe in the runtime's crash handler.
#include "sections/core/markup_writer.h"

namespace sampler::markup {
namespace {

/// Fields cannot contain ':' or '}' (Symbolizer Markup Format, "Common markup element syntax"); %s is printable.
char sanitize(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (c == ':' || c == '}' || u < 0x20 || u == 0x7f) return '_';
  return c;
}

void append_kind(CharBuffer& out, CodeKind kind) {
  if (kind == CodeKind::kPc) out.append(":pc");
  if (kind == CodeKind::kRa) out.append(":ra");
}

}  // namespace

void append_address(CharBuffer& out, uint64_t value) {
  // %p: "0x followed by an even number of hexadecimal digits" (Symbolizer Markup Format).
  unsigned digits = 1;
  while (digits < 16 && (value >> (4 * digits)) != 0) ++digits;
  if (digits % 2 != 0) ++digits;
  out.append("0x");
  out.append_hex(value, digits);
}

void write_reset(CharBuffer& out) { out.append("{{{reset}}}"); }

void write_module(CharBuffer& out, uint64_t id, const char* name, size_t name_length, const uint8_t* build_id,
                  size_t build_id_length) {
  // An empty build ID makes llvm-symbolizer reject the element (docs/formats.md section 3): write nothing instead.
  if (build_id_length == 0) return;
  out.append("{{{module:");
  out.append_decimal(id);
  out.append(':');
  for (size_t i = 0; i < name_length; ++i) out.append(sanitize(name[i]));
  out.append(":elf:");
  for (size_t i = 0; i < build_id_length; ++i) out.append_hex(build_id[i], 2);
  out.append("}}}");
}

void write_mmap(CharBuffer& out, uint64_t start, uint64_t size, uint64_t module_id, const char* flags,
                uint64_t module_relative_address) {
  // Flags are "r", "w", "x" in that order (Symbolizer Markup Format, "mmap"): written so whatever the input.
  bool read = false, write = false, execute = false;
  for (const char* p = flags; p != nullptr && *p != '\0'; ++p) {
    if (*p == 'r' || *p == 'R') read = true;
    if (*p == 'w' || *p == 'W') write = true;
    if (*p == 'x' || *p == 'X') execute = true;
  }
  out.append("{{{mmap:");
  append_address(out, start);
  out.append(':');
  append_address(out, size);
  out.append(":load:");
  out.append_decimal(module_id);
  out.append(':');
  if (read) out.append('r');
  if (write) out.append('w');
  if (execute) out.append('x');
  out.append(':');
  append_address(out, module_relative_address);
  out.append("}}}");
}

void write_bt(CharBuffer& out, uint64_t frame, uint64_t address, CodeKind kind) {
  out.append("{{{bt:");
  out.append_decimal(frame);
  out.append(':');
  append_address(out, address);
  append_kind(out, kind);
  out.append("}}}");
}

void write_pc(CharBuffer& out, uint64_t address, CodeKind kind) {
  out.append("{{{pc:");
  append_address(out, address);
  append_kind(out, kind);
  out.append("}}}");
}

}  // namespace sampler::markup
