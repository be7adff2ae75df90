// Helpers shared by the fuzz targets (fuzz/*_fuzz.cpp): an invariant check that stops the run, and gzip.
//
// A fuzz target is a function LLVMFuzzerTestOneInput(data, size) that must never crash, hang or allocate without
// bound on any input. Sanitizers find memory and undefined-behaviour errors; FUZZ_CHECK turns a broken property
// of the parser (a view outside its input, two decodings that disagree) into a finding as well.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"

/// Aborts with the failed condition: libFuzzer (and the regression runner) report it as a finding.
#define FUZZ_CHECK(condition)                                                                     \
  do {                                                                                            \
    if (!(condition)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)

namespace sampler::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

/// True if `part` lies entirely inside `whole` (views handed out by a parser must point into its input).
inline bool is_inside(std::string_view part, std::string_view whole) {
  if (part.empty()) return true;
  const auto begin = reinterpret_cast<uintptr_t>(whole.data());
  const auto p = reinterpret_cast<uintptr_t>(part.data());
  return p >= begin && p - begin <= whole.size() && part.size() <= whole.size() - (p - begin);
}

/// `data` as one gzip member (RFC 1952), as gzip(1) writes it; empty if zlib fails (it does not for small input).
inline std::string gzip(std::string_view data) {
  z_stream stream{};
  if (deflateInit2(&stream, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return status == Z_STREAM_END ? out : std::string();
}

/// Every diagnostic as one line "E/W file:line: message", for comparing two runs exactly.
inline std::string render(const DiagnosticList& list) {
  std::string out;
  for (const auto& d : list.items) {
    out += d.severity == Severity::kError ? "E " : "W ";
    out += d.file + ":" + std::to_string(d.line) + ": " + d.message + "\n";
  }
  return out;
}

}  // namespace sampler::fuzz
