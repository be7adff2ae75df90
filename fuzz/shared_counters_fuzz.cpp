// Fuzz target: the shared counters' reader (runtime/src/shared_counters.h), which sampler-run runs over a mapping
// the program it watched may have damaged in any way before dying.
//
// The input damages a well-formed mapping: the runtime's own placement lays out three units (counters with
// timestamps, bounds, a unit registered again), then each 4-byte group of the input (offset, value) overwrites one
// byte of the published part; a last byte left over (an input of 4n + 1 to 4n + 3 bytes) truncates the mapping
// to that many 256ths of its published part, as a counters file (%c in SAMPLER_FILE) cut short would be read by
// `sampler-run --recover`: a truncated mapping reads as unclaimed or with a problem. Checked properties: the reader never reads outside the mapping (it is exactly as big
// as it says, so AddressSanitizer sees any overrun), never loops without end, and always ends what it starts (a
// samples subreport it opened is closed); an undamaged mapping reads without a problem, every unit out.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "shared_counters.h"

namespace {

bool append_to(void* context, const char* data, size_t size) {
  static_cast<std::string*>(context)->append(data, size);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler::runtime;
  std::vector<uint64_t> words(1024);  // 8 KiB, 8-aligned, zero-filled: what a parent hands the runtime
  SharedArea area{reinterpret_cast<unsigned char*>(words.data()), words.size() * sizeof(uint64_t)};
  const char* problem = nullptr;
  FUZZ_CHECK(claim_shared_area(area, 1, problem));
  uint64_t values[6] = {1, 2, 3, 4, 5, 6}, first[3] = {1, 0, 2}, last[3] = {3, 0, 4}, bounds[4] = {};
  uint8_t bound_types[2] = {SAMPLER_BOUND_I32, SAMPLER_BOUND_POINTER};
  for (int copy = 0; copy < 3; ++copy) {
    sampler_scheme schemes[2] = {
        {"branches", 3, 2, SAMPLER_SCHEME_COUNTERS, 0, values, nullptr, first, last},
        {"bounds", 2, 2, SAMPLER_SCHEME_BOUNDS, 0, bounds, bound_types, nullptr, nullptr}};
    sampler_unit unit{SAMPLER_ABI_VERSION, 2, "0123456789abcdef0123456789abcdef", schemes, nullptr, 0};
    FUZZ_CHECK(place_unit_in_shared_area(area, unit));
  }
  const uint64_t published = reinterpret_cast<const SharedHeader*>(area.base)->published;
  for (size_t i = 0; i + 4 <= size; i += 4) {
    const uint32_t offset = (uint32_t{data[i]} << 16 | uint32_t{data[i + 1]} << 8 | data[i + 2]) % published;
    area.base[offset] = data[i + 3];
  }
  const bool truncated = size % 4 != 0;
  // Exactly as long as the truncated file: AddressSanitizer sees a read past its end.
  std::vector<unsigned char> cut;
  if (truncated) cut.assign(area.base, area.base + published * data[size - 1] / 256);
  const unsigned char* base = truncated ? (cut.empty() ? nullptr : cut.data()) : area.base;
  const uint64_t length = truncated ? cut.size() : area.size;
  std::string text;
  char buffer[256];
  ReportWriter out(buffer, sizeof buffer, Sink{&text, append_to});
  const SharedSnapshot snapshot = write_shared_samples(base, length, out);
  out.flush();
  if (snapshot.claimed && !text.empty()) FUZZ_CHECK(text.size() >= 10 && text.ends_with("</report>\n"));
  if (truncated) FUZZ_CHECK(!snapshot.claimed || snapshot.problem != nullptr);
  if (size == 0) FUZZ_CHECK(snapshot.problem == nullptr && snapshot.units == 3);
  return 0;
}
