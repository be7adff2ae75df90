// Compact sorted lists of ids: what each run observed (sites) and found true (predicates), kept for every run.
//
// A list is stored in whichever of two encodings is smaller:
//   deltas:  varint(count << 1 | 0), then the first id and each difference to the previous one as varints
//            (LEB128), for sparse lists;
//   bitset:  varint(count << 1 | 1), varint(first id), varint(bytes), then `bytes` bytes of bits, bit i of byte j
//            standing for id first + 8 j + i, for dense lists (a run that sampled most of 1000 sites: 1 bit each).
// So memory grows with the runs and what they observed, at about a bit or a byte per id, never 4 bytes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace sampler::analysis::id_list {

inline void put_varint(std::vector<uint8_t>& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<uint8_t>(value));
}

/// Reads a varint at `p` (the list was written by encode(): well-formed) and moves `p` past it.
inline uint64_t get_varint(const uint8_t*& p) {
  uint64_t value = 0;
  for (int shift = 0;; shift += 7) {
    uint8_t byte = *p++;
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return value;
  }
}

inline size_t varint_size(uint64_t value) {
  size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

/// Bitset bytes as a 64-bit word (byte b: bits 8 b to 8 b + 7), `n` of them (at most 8 are read).
inline uint64_t load_bits(const uint8_t* p, size_t n) {
  uint64_t word = 0;
  if (std::endian::native == std::endian::little && n >= 8) {
    std::memcpy(&word, p, 8);
    return word;
  }
  for (size_t b = 0; b < n && b < 8; ++b) word |= static_cast<uint64_t>(p[b]) << (8 * b);
  return word;
}

/// Stores the `n` first bytes of load_bits()' word (at most 8).
inline void store_bits(uint8_t* p, size_t n, uint64_t word) {
  if (std::endian::native == std::endian::little && n >= 8) {
    std::memcpy(p, &word, 8);
    return;
  }
  for (size_t b = 0; b < n && b < 8; ++b) p[b] = static_cast<uint8_t>(word >> (8 * b));
}

/// Appends the encoding of `ids` (sorted, no duplicates) to `out`.
inline void encode(std::span<const uint32_t> ids, std::vector<uint8_t>& out) {
  uint64_t count = ids.size();
  if (count == 0) {
    put_varint(out, 0);
    return;
  }
  // Every delta takes at least a byte: a bitset smaller than the count is smaller than the deltas. (Between the
  // two, deltas are kept: the choice only needs to be near the smaller, and this one costs no pass.)
  uint32_t first = ids.front();
  size_t bytes = (static_cast<size_t>(ids.back() - first) >> 3) + 1;
  if (varint_size(first) + varint_size(bytes) + bytes < count) {
    put_varint(out, count << 1 | 1);
    put_varint(out, first);
    put_varint(out, bytes);
    size_t start = out.size();
    out.resize(start + bytes, 0);
    uint8_t* bits = out.data() + start;
    // Bits gathered 64 at a time in a register: a store per id into the same byte would wait on the last one.
    uint64_t word = 0;
    size_t at = 0;  // the word's first byte
    for (uint32_t id : ids) {
      size_t byte = static_cast<size_t>((id - first) >> 6) * 8;
      if (byte != at) {
        store_bits(bits + at, bytes - at, word);
        word = 0;
        at = byte;
      }
      word |= uint64_t{1} << ((id - first) & 63);
    }
    store_bits(bits + at, bytes - at, word);
    return;
  }
  put_varint(out, count << 1);
  uint32_t previous = 0;
  for (uint32_t id : ids) {
    put_varint(out, id - previous);
    previous = id;
  }
}

/// std::popcount inline: without -mpopcnt, GCC makes that a call into libgcc per word.
inline uint64_t bit_count(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555);
  x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0f;
  return (x * 0x0101010101010101) >> 56;
}

/// A span of 64-bit words [begin, end) of a bitset (word w: ids 64 w to 64 w + 63).
struct WordRange {
  size_t begin = 0, end = 0;
};

/// Appends to `out` the same bytes as encode() of the ids whose bits are set in `words` (bit i of word w: id
/// 64 w + i), without listing them first: the reading of reports builds each run's bitsets directly. Only the
/// words of `ranges` (sorted, disjoint, inside `words`) are searched for set bits; every other word must be 0.
inline void encode_bits(std::span<const uint64_t> words, std::span<const WordRange> ranges,
                        std::vector<uint8_t>& out) {
  uint64_t count = 0;
  size_t first_word = SIZE_MAX, last_word = 0;
  for (const WordRange& range : ranges) {
    for (size_t w = range.begin; w < range.end; ++w) {
      if (words[w] == 0) continue;
      count += bit_count(words[w]);
      if (first_word == SIZE_MAX) first_word = w;
      last_word = w;
    }
  }
  if (count == 0) {
    put_varint(out, 0);
    return;
  }
  const size_t first_bit = static_cast<size_t>(std::countr_zero(words[first_word]));
  const size_t last_bit = 63 - static_cast<size_t>(std::countl_zero(words[last_word]));
  const uint32_t first = static_cast<uint32_t>(first_word * 64 + first_bit);
  const uint32_t last = static_cast<uint32_t>(last_word * 64 + last_bit);
  const size_t bytes = (static_cast<size_t>(last - first) >> 3) + 1;
  if (varint_size(first) + varint_size(bytes) + bytes < count) {  // encode()'s choice
    put_varint(out, count << 1 | 1);
    put_varint(out, first);
    put_varint(out, bytes);
    size_t start = out.size();
    out.resize(start + bytes, 0);
    uint8_t* bits = out.data() + start;
    // The bits from `first` on, 64 at a time (the words between the ranges are 0, so they need no search).
    const size_t shift = first & 63;
    size_t w = first >> 6;
    for (size_t at = 0; at < bytes; at += 8, ++w) {
      uint64_t word = words[w] >> shift;
      if (shift != 0 && w + 1 <= last_word) word |= words[w + 1] << (64 - shift);
      store_bits(bits + at, bytes - at, word);
    }
    // The last byte holds bits beyond `last` only if they were set: they are not (last is the highest).
    return;
  }
  put_varint(out, count << 1);
  uint32_t previous = 0;
  for (const WordRange& range : ranges) {
    for (size_t w = range.begin; w < range.end; ++w) {
      for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
        uint32_t id = static_cast<uint32_t>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
        put_varint(out, id - previous);
        previous = id;
      }
    }
  }
}

/// Calls f(id) for each id of the list at `p`, in increasing order.
template <class F>
void for_each(const uint8_t* p, F&& f) {
  uint64_t header = get_varint(p);
  uint64_t count = header >> 1;
  if (count == 0) return;
  if (header & 1) {
    uint32_t first = static_cast<uint32_t>(get_varint(p));
    uint64_t bytes = get_varint(p);
    for (uint64_t j = 0; j < bytes; j += 8) {  // 64 bits at a time: fewer loop exits to mispredict
      for (uint64_t bits = load_bits(p + j, bytes - j); bits != 0; bits &= bits - 1) {
        f(static_cast<uint32_t>(first + 8 * j + static_cast<unsigned>(std::countr_zero(bits))));
      }
    }
    return;
  }
  uint32_t id = 0;
  for (uint64_t i = 0; i < count; ++i) {
    id += static_cast<uint32_t>(get_varint(p));
    f(id);
  }
}

/// The ids of the list at `p` for callers that count them: a bitset list as words(w, bits) for each 64-bit word
/// w of ids (bit i: id 64 w + i; increasing w, none twice, perhaps 0), a delta list as id(id) for each id.
template <class Words, class Id>
void for_each_word(const uint8_t* p, Words&& words, Id&& id) {
  uint64_t header = get_varint(p);
  uint64_t count = header >> 1;
  if (count == 0) return;
  if (!(header & 1)) {
    uint32_t value = 0;
    for (uint64_t i = 0; i < count; ++i) {
      value += static_cast<uint32_t>(get_varint(p));
      id(value);
    }
    return;
  }
  const uint64_t first = get_varint(p);
  const uint64_t bytes = get_varint(p);
  const unsigned shift = static_cast<unsigned>(first & 63);
  uint64_t w = first >> 6;
  uint64_t carry = 0;  // the bits of the last stored word that belong to the next aligned word
  for (uint64_t j = 0; j < bytes; j += 8, ++w) {
    uint64_t bits = load_bits(p + j, bytes - j);
    words(w, (bits << shift) | carry);
    carry = shift == 0 ? 0 : bits >> (64 - shift);
  }
  if (carry != 0) words(w, carry);
}

/// True if the list at `p` holds `wanted`.
inline bool contains(const uint8_t* p, uint32_t wanted) {
  uint64_t header = get_varint(p);
  uint64_t count = header >> 1;
  if (count == 0) return false;
  if (header & 1) {
    uint32_t first = static_cast<uint32_t>(get_varint(p));
    uint64_t bytes = get_varint(p);
    if (wanted < first || ((wanted - first) >> 3) >= bytes) return false;
    return (p[(wanted - first) >> 3] >> ((wanted - first) & 7)) & 1;
  }
  uint32_t id = 0;
  for (uint64_t i = 0; i < count; ++i) {
    id += static_cast<uint32_t>(get_varint(p));
    if (id >= wanted) return id == wanted;
  }
  return false;
}

}  // namespace sampler::analysis::id_list
