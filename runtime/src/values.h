// How a bounds site's min/max pair is stored, so that zero-initialised storage means "nothing seen yet".
//
// Every value maps to an order-preserving 64-bit key (signed types flip the sign bit; unsigned types and pointers
// are their own key). A pair is stored as (~key of the minimum, key of the maximum): both words only ever grow,
// so each update is an atomic max, and 0 in both is the identity of min/max merging. On output the key is
// turned back into a value and clamped to the assigned type's range, so an unsampled site prints the type's
// largest value as its min and the smallest as its max (docs/formats.md section 3 merges bounds by min of minima and
// max of maxima: these are the identity elements). Header-only and allocation-free: the crash path uses it too.
#pragma once

#include <stdint.h>

#include "sampler/abi.h"

namespace sampler::runtime {

inline bool bound_type_is_valid(uint8_t type) { return type >= SAMPLER_BOUND_I8 && type <= SAMPLER_BOUND_POINTER; }
inline bool bound_type_is_signed(uint8_t type) { return type >= SAMPLER_BOUND_I8 && type <= SAMPLER_BOUND_I64; }

/// Bits of the type: 8, 16, 32 or 64.
inline unsigned bound_type_bits(uint8_t type) {
  switch (type) {
    case SAMPLER_BOUND_I8:
    case SAMPLER_BOUND_U8:
      return 8;
    case SAMPLER_BOUND_I16:
    case SAMPLER_BOUND_U16:
      return 16;
    case SAMPLER_BOUND_I32:
    case SAMPLER_BOUND_U32:
      return 32;
    default:
      return 64;
  }
}

inline uint64_t bound_key(uint8_t type, uint64_t value) {
  return bound_type_is_signed(type) ? value ^ (uint64_t{1} << 63) : value;
}

/// A signed bound value clamped to the type's range.
inline int64_t bound_signed_value(uint8_t type, uint64_t key) {
  int64_t value = static_cast<int64_t>(key ^ (uint64_t{1} << 63));
  unsigned bits = bound_type_bits(type);
  if (bits < 64) {
    int64_t high = (int64_t{1} << (bits - 1)) - 1;
    int64_t low = -high - 1;
    if (value > high) value = high;
    if (value < low) value = low;
  }
  return value;
}

/// An unsigned (or pointer) bound value clamped to the type's range.
inline uint64_t bound_unsigned_value(uint8_t type, uint64_t key) {
  unsigned bits = bound_type_bits(type);
  if (bits < 64) {
    uint64_t high = (uint64_t{1} << bits) - 1;
    if (key > high) return high;
  }
  return key;
}

}  // namespace sampler::runtime
