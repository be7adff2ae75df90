// Whole-buffer CBF decoding (see sections/cbf_decode.h).
#include "sections/cbf_decode.h"

#include "sections/base64.h"

namespace sampler::cbf {

uint64_t DecodedStack::frame_count() const {
  uint64_t total = 0;
  for (const Item& item : items) {
    uint64_t add = item.type == ItemType::kFrame ? 1 : item.type == ItemType::kRepeat ? item.count : 0;
    total = add > UINT64_MAX - total ? UINT64_MAX : total + add;
  }
  return total;
}

DecodedStack decode_stack(std::span<const uint8_t> data) {
  DecodedStack stack;
  Decoder decoder(data.data(), data.size());
  // The core decoder consumes at least one byte per item, so this loop ends within data.size() + 1 steps.
  for (;;) {
    Item item = decoder.next();
    if (item.type == ItemType::kFrame || item.type == ItemType::kOmit || item.type == ItemType::kRepeat) {
      stack.items.push_back(item);
      continue;
    }
    stack.status = item.type;
    stack.status_offset = item.offset;
    if (item.type == ItemType::kError) stack.error = DecodeError{item.offset, item.error, false};
    break;
  }
  stack.word_size = decoder.word_size();
  return stack;
}

DecodedStack decode_stack_base64(std::string_view text) {
  base64::DecodedBytes bytes = base64::decode_to_vector(text);
  if (!bytes.ok) {
    DecodedStack stack;
    stack.status = ItemType::kError;
    stack.status_offset = bytes.error_offset;
    stack.error = DecodeError{bytes.error_offset, bytes.error, true};
    return stack;
  }
  return decode_stack(bytes.bytes);
}

std::string_view frame_kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::kPc: return "pc";
    case FrameKind::kRa: return "ra";
    case FrameKind::kAsync: return "async";
  }
  return "pc";
}

}  // namespace sampler::cbf
