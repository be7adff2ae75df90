// Fuzz target: the Compact Backtrace Format decoder (Swift's CompactBacktraceFormat.md, docs/formats.md 3.2): the
// allocation-free cursor cbf::Decoder (sections/core/cbf.h) and decode_stack / decode_stack_base64
// (sections/cbf_decode.h).
//
// Each input is decoded as it is and again with its information byte set to each word size (16, 32, 64 bits),
// so that every size is exercised whatever the mutator does to the first byte. Checked properties:
//  - the cursor terminates within size + 1 steps, its items move forward and stay inside the data, and once it
//    has ended it keeps returning the same final item;
//  - decode_stack agrees with the cursor, and with decode_stack_base64 of the same bytes in base64;
//  - re-encoding what was decoded (cbf::Encoder) fits in max_encoded_size and decodes to the same stack
//    (frames, repeats and omissions compared as runs, since the encoder may pick other encodings).
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "sections/base64.h"
#include "sections/cbf_decode.h"

namespace sampler::fuzz {
namespace {

using cbf::Item;
using cbf::ItemType;

bool is_final(ItemType type) {
  return type != ItemType::kFrame && type != ItemType::kOmit && type != ItemType::kRepeat;
}

bool same_item(const Item& a, const Item& b) {
  if (a.type != b.type || a.offset != b.offset) return false;
  if (a.type == ItemType::kFrame || a.type == ItemType::kRepeat) {
    if (a.frame.kind != b.frame.kind || a.frame.address != b.frame.address) return false;
  }
  if (a.type == ItemType::kOmit || a.type == ItemType::kRepeat) return a.count == b.count;
  return true;
}

// The meaning of a stack: runs of identical frames and runs of omitted frames, zero counts dropped.
struct Run {
  bool omit;
  cbf::Frame frame;
  unsigned __int128 count;
};

std::vector<Run> runs_of(const std::vector<Item>& items) {
  std::vector<Run> runs;
  for (const Item& item : items) {
    const bool omit = item.type == ItemType::kOmit;
    const unsigned __int128 count = item.type == ItemType::kFrame ? 1 : item.count;
    if (count == 0) continue;
    if (!runs.empty() && runs.back().omit == omit &&
        (omit || (runs.back().frame.kind == item.frame.kind && runs.back().frame.address == item.frame.address))) {
      runs.back().count += count;
    } else {
      runs.push_back(Run{omit, item.frame, count});
    }
  }
  return runs;
}

bool same_runs(const std::vector<Run>& a, const std::vector<Run>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].omit != b[i].omit || a[i].count != b[i].count) return false;
    if (!a[i].omit && (a[i].frame.kind != b[i].frame.kind || a[i].frame.address != b[i].frame.address)) return false;
  }
  return true;
}

// Re-encodes a decoded stack and checks it decodes to the same runs. Repeats are expanded into frame() calls,
// so stacks standing for very many frames are skipped.
void check_round_trip(const cbf::DecodedStack& stack) {
  constexpr uint64_t kMaxExpanded = 1u << 16;
  uint64_t frames = 0, omits = 0;
  for (const Item& item : stack.items) {
    if (item.type == ItemType::kFrame) ++frames;
    if (item.type == ItemType::kRepeat) {
      if (item.count > kMaxExpanded) return;
      frames += item.count;
    }
    if (item.type == ItemType::kOmit) ++omits;
    if (frames > kMaxExpanded) return;
  }
  std::vector<uint8_t> buffer(cbf::max_encoded_size(stack.word_size, frames, omits));
  cbf::Encoder encoder(stack.word_size, buffer.data(), buffer.size());
  for (const Item& item : stack.items) {
    if (item.type == ItemType::kFrame) encoder.frame(item.frame.kind, item.frame.address);
    if (item.type == ItemType::kRepeat) {
      for (uint64_t i = 0; i < item.count; ++i) encoder.frame(item.frame.kind, item.frame.address);
    }
    if (item.type == ItemType::kOmit) encoder.omit(item.count);
  }
  const size_t length = encoder.finish(stack.truncated());
  FUZZ_CHECK(length != 0);  // max_encoded_size is an upper bound
  FUZZ_CHECK(length <= buffer.size());
  const cbf::DecodedStack again = cbf::decode_stack(std::span<const uint8_t>(buffer.data(), length));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again.word_size == stack.word_size);
  FUZZ_CHECK(again.status == (stack.truncated() ? ItemType::kTruncated : ItemType::kEnd));
  FUZZ_CHECK(again.status_offset == length - 1);
  FUZZ_CHECK(same_runs(runs_of(stack.items), runs_of(again.items)));
}

void check(const uint8_t* data, size_t size) {
  // The cursor on its own.
  cbf::Decoder decoder(data, size);
  std::vector<Item> items;
  Item final_item{};
  size_t steps = 0;
  size_t previous_offset = 0;
  for (;;) {
    FUZZ_CHECK(++steps <= size + 1);
    const Item item = decoder.next();
    if (is_final(item.type)) {
      final_item = item;
      break;
    }
    FUZZ_CHECK(item.offset < size);
    FUZZ_CHECK(items.empty() || item.offset > previous_offset);
    previous_offset = item.offset;
    if (item.type == ItemType::kFrame) {
      FUZZ_CHECK(item.frame.kind == cbf::FrameKind::kPc || item.frame.kind == cbf::FrameKind::kRa ||
                 item.frame.kind == cbf::FrameKind::kAsync);
      const unsigned bits = 8 * cbf::word_bytes(decoder.word_size());
      if (bits < 64) FUZZ_CHECK(item.frame.address >> bits == 0);
    }
    items.push_back(item);
  }
  FUZZ_CHECK(final_item.offset <= size);
  // An error is at an offending byte; only an empty buffer has its error at offset 0 == size.
  if (final_item.type == ItemType::kError) {
    FUZZ_CHECK(final_item.error != nullptr && final_item.offset < size + (size == 0));
  }
  for (int i = 0; i < 2; ++i) FUZZ_CHECK(same_item(decoder.next(), final_item));

  // The whole-buffer decoder agrees with it.
  const cbf::DecodedStack stack = cbf::decode_stack(std::span<const uint8_t>(data, size));
  FUZZ_CHECK(stack.items.size() == items.size());
  for (size_t i = 0; i < items.size(); ++i) FUZZ_CHECK(same_item(stack.items[i], items[i]));
  FUZZ_CHECK(stack.status == final_item.type);
  FUZZ_CHECK(stack.status_offset == final_item.offset);
  FUZZ_CHECK(stack.error.has_value() == (stack.status == ItemType::kError));
  if (stack.error) FUZZ_CHECK(!stack.error->in_base64 && stack.error->offset == final_item.offset);
  (void)stack.frame_count();

  // The `cbf:` line form: base64 of the same bytes decodes to the same stack.
  const std::string text = base64::encode_to_string(std::span<const uint8_t>(data, size));
  const cbf::DecodedStack from_text = cbf::decode_stack_base64(text);
  FUZZ_CHECK(from_text.items.size() == stack.items.size());
  for (size_t i = 0; i < items.size(); ++i) FUZZ_CHECK(same_item(from_text.items[i], stack.items[i]));
  FUZZ_CHECK(from_text.status == stack.status && from_text.status_offset == stack.status_offset);

  if (stack.ok()) check_round_trip(stack);
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler::fuzz;
  check(data, size);
  if (size == 0) return 0;
  // Each word size with the same instructions (version 0, size 0..2 in the low two bits: the Compact Backtrace Format).
  std::vector<uint8_t> copy(data, data + size);
  for (uint8_t word_size = 0; word_size < 3; ++word_size) {
    if (data[0] == word_size) continue;
    copy[0] = word_size;
    check(copy.data(), copy.size());
  }
  // The cbf: payload as text, whatever it holds: base64 errors must be reported, never crash.
  const sampler::cbf::DecodedStack stack = sampler::cbf::decode_stack_base64(as_text(data, size));
  if (stack.error && stack.error->in_base64) FUZZ_CHECK(stack.items.empty() && stack.error->offset <= size);
  return 0;
}
