// Fuzz target: the GSYM reader (sections/gsym.h) over bytes in memory.
//
// Checked properties: opening either fails with an error inside the input or gives a reader whose every lookup
// (at each function start, one byte before and inside it, and a few addresses from the input) ends in found,
// not found or an error with an offset inside the input; found frames point into the input and list the
// concrete function last; a lookup through a LineTableCache gives the same answer as one without; verify() is
// only required not to crash (and to report an offset inside the input). The inline depth limit bounds the
// recursion; sizes are never allocated from the input (lookups allocate one frame per inline level).
#include <cstdint>
#include <string_view>

#include "fuzz_util.h"
#include "sections/gsym.h"

namespace sampler::fuzz {
namespace {

void check_lookup(const gsym::Reader& reader, std::string_view input, uint64_t address,
                  gsym::LineTableCache& cache) {
  gsym::LookupResult result;
  gsym::Error error;
  const gsym::Found found = reader.lookup(address, result, error);
  // The cache must not change an answer.
  gsym::LookupResult cached;
  gsym::Error cached_error;
  FUZZ_CHECK(reader.lookup(address, cached, cached_error, &cache) == found);
  FUZZ_CHECK(cached.frames.size() == result.frames.size());
  for (size_t i = 0; i < result.frames.size(); ++i) {
    FUZZ_CHECK(cached.frames[i].name == result.frames[i].name && cached.frames[i].line == result.frames[i].line &&
               cached.frames[i].file == result.frames[i].file);
  }
  switch (found) {
    case gsym::Found::kYes:
      FUZZ_CHECK(!result.frames.empty() && result.frames.size() <= gsym::kMaxInlineDepth + 2);
      for (const auto& frame : result.frames) {
        FUZZ_CHECK(is_inside(frame.name, input) && is_inside(frame.dir, input) && is_inside(frame.file, input));
      }
      FUZZ_CHECK(address >= result.start);
      break;
    case gsym::Found::kNo:
      FUZZ_CHECK(result.frames.empty());
      break;
    case gsym::Found::kError:
      FUZZ_CHECK(!error.message.empty() && error.offset <= input.size());
      break;
  }
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler;
  const std::string_view input = fuzz::as_text(data, size);
  gsym::Error error;
  auto reader = gsym::Reader::open(input, error);
  if (!reader) {
    FUZZ_CHECK(!error.message.empty() && error.offset <= size);
    return 0;
  }
  // Lookups around the first entries (bounded: the count comes from the input).
  gsym::LineTableCache cache(4);
  const uint32_t count = reader->address_count() < 64 ? reader->address_count() : 64;
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t start = reader->address_at(i);
    fuzz::check_lookup(*reader, input, start, cache);
    fuzz::check_lookup(*reader, input, start - 1, cache);
    fuzz::check_lookup(*reader, input, start + 5, cache);
  }
  for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
    uint64_t address = 0;
    for (size_t b = 0; b < 8; ++b) address |= uint64_t{data[i + b]} << (8 * b);
    fuzz::check_lookup(*reader, input, address, cache);
  }
  if (!reader->verify(error)) FUZZ_CHECK(!error.message.empty() && error.offset <= size);
  return 0;
}
