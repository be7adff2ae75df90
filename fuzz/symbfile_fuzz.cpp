// Fuzz target: the symbfile reader (sections/symbfile.h) over bytes in memory. The first byte picks the kind
// ('p': returnpads, otherwise ranges); the rest is the file.
//
// Checked properties: parsing either fails with an error whose offset lies inside the file or gives a file
// whose lookups (at addresses taken from the input, and around them) answer with frames that are non-empty,
// bounded by the inline depth limit, and whose ranges answer holds the address. Memory stays proportional to
// the input: no count read from it is allocated before the bytes it describes. Corpus: `sampler-symbols gsym
// --symbfile` of make_corpus.py's GSYM_SOURCE (gcc -O2 -g), the kind byte prepended; a cut copy; a wrong kind.
#include <cstdint>
#include <string_view>

#include "fuzz_util.h"
#include "sections/symbfile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler;
  if (size == 0) return 0;
  const symbfile::Kind kind = data[0] == 'p' ? symbfile::Kind::kReturnPads : symbfile::Kind::kRanges;
  const std::string_view input = fuzz::as_text(data + 1, size - 1);
  gsym::Error error;
  auto file = symbfile::File::parse(input, kind, error);
  if (!file) {
    FUZZ_CHECK(!error.message.empty() && error.offset <= input.size());
    return 0;
  }
  FUZZ_CHECK(file->kind() == kind);
  gsym::LookupResult result;
  for (size_t i = 0; i + 8 <= input.size() && i < 512; i += 4) {
    uint64_t address = 0;
    for (size_t b = 0; b < 8; ++b) address |= uint64_t{static_cast<uint8_t>(input[i + b])} << (8 * b);
    for (uint64_t a : {address, address & 0xffff, address & 0xff}) {
      if (file->lookup_pad(a, result)) {
        FUZZ_CHECK(!result.frames.empty() && result.frames.size() <= symbfile::kMaxPadFrames);
      }
      if (file->lookup_ranges(a, result)) {
        FUZZ_CHECK(!result.frames.empty() && result.frames.size() <= gsym::kMaxInlineDepth + 1);
        FUZZ_CHECK(a >= result.start && a - result.start < result.size);
      }
    }
  }
  return 0;
}
