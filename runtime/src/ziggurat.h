// Exponential variates by the ziggurat method (Marsaglia and Tsang, "The Ziggurat Method for Generating Random
// Variables", Journal of Statistical Software 5(8), 2000): the draw of a geometric countdown without a logarithm.
// The density e^-x is covered by 256 layers of equal area; a layer is chosen with 8 random bits, a point in it
// with 53 more, and in 97.8 % of draws the point lies under the curve at once (one multiplication, one
// comparison). The rest test the layer's wedge, or draw from the tail beyond the base layer, with a logarithm.
// The distribution is exact up to the tables' rounding (about 2^-52 relative): no approximation of the curve.
// The tables are computed at compile time (no libm, no start-up cost).
#pragma once

#include <stdint.h>

#include "sampling.h"

namespace sampler::runtime {

namespace ziggurat {

constexpr int kLayers = 256;
/// The base layer's right edge and every layer's area, for 256 layers of e^-x (Marsaglia and Tsang's constants).
constexpr double kTailStart = 7.69711747013104971669;
constexpr double kLayerArea = 3.94965982258155719932e-3;

// Compile-time exp and log in double precision: series after range reduction, accurate to a few ulp, which is
// all the tables need (a layer's area off by 1e-16 shifts the distribution by as much).
constexpr double kLn2 = 0.69314718055994530942;

constexpr double power_of_two(int k) {
  double p = 1.0;
  for (; k > 0; --k) p *= 2.0;
  for (; k < 0; ++k) p *= 0.5;
  return p;
}

constexpr double exp_of(double x) {
  int k = static_cast<int>(x / kLn2 + (x < 0 ? -0.5 : 0.5));
  double t = x - k * kLn2;  // |t| <= ln 2 / 2
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < 30; ++n) {
    term *= t / n;
    sum += term;
  }
  return sum * power_of_two(k);
}

constexpr double log_of(double x) {
  int k = 0;
  while (x > 1.4142135623730951) {
    x *= 0.5;
    ++k;
  }
  while (x < 0.7071067811865476) {
    x *= 2.0;
    --k;
  }
  double s = (x - 1.0) / (x + 1.0), s2 = s * s, term = s, sum = 0.0;  // |s| < 0.172
  for (int n = 1; n < 60; n += 2) {
    sum += term / n;
    term *= s2;
  }
  return 2.0 * sum + k * kLn2;
}

struct Tables {
  double width[kLayers];      ///< the layer's width times 2^-53: the point's x is its 53-bit integer times this
  uint64_t inside[kLayers];   ///< below this 53-bit integer the point is under the curve (the layer's core)
  double bottom[kLayers];     ///< e^-x at the layer's lower edge (its wide end)
  double top[kLayers];        ///< e^-x at its upper edge
};

// Layer 0 is the base: the rectangle [0, r] x [0, e^-r] and the tail beyond r, as one box of width A / e^-r. Layer
// i >= 1 spans heights e^-x[i-1] to e^-x[i] over [0, x[i-1]], where x[0] = r, x[i] = -ln(e^-x[i-1] + A / x[i-1]),
// and the last layer's upper edge is the curve's top, x[255] = 0.
constexpr Tables make_tables() {
  Tables t{};
  double edge[kLayers] = {};
  edge[0] = kTailStart;
  for (int i = 1; i < kLayers - 1; ++i) edge[i] = -log_of(exp_of(-edge[i - 1]) + kLayerArea / edge[i - 1]);
  edge[kLayers - 1] = 0.0;
  constexpr double kScale = 0x1p-53;
  double base_width = kLayerArea / exp_of(-kTailStart);
  t.width[0] = base_width * kScale;
  t.inside[0] = static_cast<uint64_t>(kTailStart / base_width * 0x1p53);
  t.bottom[0] = 0.0;
  t.top[0] = exp_of(-kTailStart);
  for (int i = 1; i < kLayers; ++i) {
    t.width[i] = edge[i - 1] * kScale;
    t.inside[i] = static_cast<uint64_t>(edge[i] / edge[i - 1] * 0x1p53);
    t.bottom[i] = exp_of(-edge[i - 1]);
    t.top[i] = exp_of(-edge[i]);
  }
  return t;
}

inline constexpr Tables kTables = make_tables();

constexpr bool base_is_widest() {
  for (int i = 1; i < kLayers; ++i) {
    if (kTables.width[i] > kTables.width[0]) return false;
  }
  return true;
}
static_assert(base_is_widest(), "fill_countdown_table() takes its shift from the base layer");

}  // namespace ziggurat

/// The draw's common case, from its first word `bits`: true, with the variate in `x`, when the point falls in its
/// layer's core (97.8 % of draws); otherwise `x` is the point's abscissa, for exponential_beyond_core().
inline bool exponential_in_core(uint64_t bits, double& x) {
  using ziggurat::kTables;
  uint32_t layer = static_cast<uint32_t>(bits & 0xff);
  uint64_t position = bits >> 11;
  x = static_cast<double>(position) * kTables.width[layer];
  return position < kTables.inside[layer];
}

/// The rest of a draw whose first word `bits` fell outside its layer's core (abscissa `x`), taking further words
/// from `next()`: the base layer's tail, or the wedge's test, and a new draw if the point is above the curve.
template <typename Next>
double exponential_beyond_core(uint64_t bits, double x, Next&& next) {
  using ziggurat::kTables;
  for (;;) {
    uint32_t layer = static_cast<uint32_t>(bits & 0xff);
    if (layer == 0) {
      // Beyond the base rectangle: the tail, x > r, is r plus an exponential variate (memoryless).
      double u = static_cast<double>((next() >> 11) + 1) * 0x1.0p-53;  // (0, 1]
      return ziggurat::kTailStart - natural_log(u);
    }
    // In the wedge between the layer's core and its wide end: under the curve with probability given by a height
    // drawn across the layer, tested as ln(height) < -x (no exp at run time).
    double u = static_cast<double>((next() >> 11) + 1) * 0x1.0p-53;
    double height = kTables.bottom[layer] + u * (kTables.top[layer] - kTables.bottom[layer]);
    if (natural_log(height) < -x) return x;
    bits = next();
    if (exponential_in_core(bits, x)) return x;
  }
}

/// The geometric countdown's draw at one draw scale, in integer fixed point (docs/decisions.md, "The countdown in
/// fixed point"). In a layer's core the point's abscissa is u w, u = word / 2^64 and w the layer's width (the
/// word's low 11 bits, below the 53 of the position, move it by less than 2^-53 w), and the countdown
/// 1 + floor(u w scale) is the high word of word x multiplier, shifted: one multiplication, no conversion to or from
/// double, and no cap (every core countdown is below 2^61). Made for each configuration (fill_countdown_table).
struct CountdownTable {
  /// A word below this is in its layer's core (the position below `inside`: inside << 11); 0 in every layer where
  /// the scale is beyond fixed point, so that every draw takes countdown_beyond_core().
  uint64_t core_limit[ziggurat::kLayers];
  uint64_t multiplier[ziggurat::kLayers];  ///< the layer's width (2^53 width) times the scale, times 2^shift
  uint32_t shift;
  double scale;  ///< the draw scale, for the draws beyond the core
};

/// The table for `scale` (> 0): the shift as large as the widest layer allows (its multiplier keeps 60 or more
/// significant bits at any scale, the narrower layers' as many fewer as they are narrower), and fixed point only
/// where the widest layer's countdown stays below 2^61 (a sparsity up to about 2.6 * 10^17; the plans' clock,
/// 2^48, is far below).
inline void fill_countdown_table(CountdownTable& table, double scale) {
  using ziggurat::kTables;
  double largest = kTables.width[0] * 0x1p53 * scale;  // the base layer is the widest (ziggurat::base_is_widest())
  bool fixed = largest < 0x1p61;
  uint32_t shift = 0;
  double factor = 1.0;
  while (fixed && shift < 63 && largest * factor * 2.0 < 0x1p64) {
    ++shift;
    factor *= 2.0;
  }
  for (int i = 0; i < ziggurat::kLayers; ++i) {
    table.core_limit[i] = fixed ? kTables.inside[i] << 11 : 0;
    table.multiplier[i] = fixed ? static_cast<uint64_t>(kTables.width[i] * 0x1p53 * scale * factor) : 0;
  }
  table.shift = shift;
  table.scale = scale;
}

/// The common case of the countdown's draw from its first word `bits`: in the layer's core.
inline bool countdown_in_core(uint64_t bits, const CountdownTable& table) {
  return bits < table.core_limit[bits & 0xff];
}

/// The countdown of a word in its layer's core (countdown_in_core()), `shift` being the table's.
inline int64_t core_countdown(uint64_t bits, const CountdownTable& table, uint32_t shift) {
  __uint128_t product = static_cast<__uint128_t>(bits) * table.multiplier[bits & 0xff];
  return 1 + static_cast<int64_t>(static_cast<uint64_t>(product >> 64) >> shift);
}

/// An exponential variate of mean 1 (>= 0, finite), from the 64-bit words `next()` returns: one word in 97.8 % of
/// draws, more in the rest.
template <typename Next>
inline double exponential_variate(Next&& next) {
  uint64_t bits = next();
  double x;
  if (__builtin_expect(exponential_in_core(bits, x), 1)) return x;
  return exponential_beyond_core(bits, x, next);
}

/// The rest of a countdown's draw whose first word `bits` is not in its layer's core by `table` (or any word, where
/// the table's scale is beyond fixed point): the variate in double, scaled and capped (countdown_at_scale()).
template <typename Next>
int64_t countdown_beyond_core(uint64_t bits, const CountdownTable& table, Next&& next) {
  double x;
  double e = exponential_in_core(bits, x) ? x : exponential_beyond_core(bits, x, next);
  return countdown_at_scale(e, table.scale);
}

/// A countdown at the table's scale from the words `next()` returns, as a thread's bank draws it.
template <typename Next>
int64_t countdown_from_words(const CountdownTable& table, Next&& next) {
  uint64_t bits = next();
  if (__builtin_expect(countdown_in_core(bits, table), 1)) return core_countdown(bits, table, table.shift);
  return countdown_beyond_core(bits, table, next);
}

}  // namespace sampler::runtime
