// Per-thread geometric sampling (docs/instrumenting.md section 2): the exported countdown, lazy per-thread seeding, the
// draw. No libm (the logarithm is computed here) and no C++ library, so a C program links libsampler.a with plain gcc.
#include "sampling.h"

#include <sys/types.h>
#include <time.h>

#include "atomic.h"
#include "crash_handler.h"
#include "raw_syscall.h"
#include "runtime_state.h"
#include "sampler/abi.h"
#include "ziggurat.h"

// The fast path's countdown: decremented inline by every site (see sampler/record.h). 1 at first, so a new thread's
// first opportunity comes here and seeds the thread; never below 1 after the runtime sets it, so that a site may
// test for 0 (sampler/abi.h).
// (Declared extern "C" by sampler/abi.h.)
SAMPLER_API __thread int64_t sampler_countdown __attribute__((tls_model("initial-exec"))) = 1;
SAMPLER_API __thread sampler_countdown_bank sampler_bank __attribute__((tls_model("initial-exec")));

namespace sampler::runtime {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));
uint32_t g_configuration = 0;

namespace {

/// A countdown that is never reached in practice (2^62 opportunities). Sampling off sets it, and sampler-cc's
/// functions run their twin without sites for any countdown from 2^61 (docs/instrumenting.md section 4).
constexpr int64_t kNever = int64_t{1} << 62;

struct Configuration {
  bool enabled = false;
  bool seeded = false;
  double sparsity = 0;
  /// The countdowns' draw. Its scale is -1 / ln(1 - 1/sparsity) (draw_scale_for) when sampling is on at a
  /// sparsity above 1; 0 otherwise (then no countdown is drawn: none reaches 0, or every one is 1).
  CountdownTable countdowns{};
  uint64_t seed = 0;
};
Configuration g_config;
uint32_t g_thread_count = 0;
uint64_t g_clock = 0;

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void seed_thread(ThreadState& t) {
  uint32_t index = fetch_add_relaxed(&g_thread_count, uint32_t{1});
  uint64_t x;
  if (g_config.seeded) {
    // Reproducible: the same SAMPLER_SEED gives thread k the same stream in every run.
    x = g_config.seed ^ (0xd1b54a32d192ed03ull * (uint64_t{index} + 1));
  } else {
    uint64_t entropy[2] = {0, 0};
    long got = sys::call(SYS_getrandom, reinterpret_cast<long>(entropy), sizeof entropy, 1 /* GRND_NONBLOCK */);
    if (got != static_cast<long>(sizeof entropy)) {
      // No entropy yet (early boot) or no getrandom: the clock, the thread and an address still differ per run.
      struct timespec now {};
      clock_gettime(CLOCK_MONOTONIC, &now);
      entropy[0] = static_cast<uint64_t>(now.tv_nsec) ^ (static_cast<uint64_t>(now.tv_sec) << 30);
      entropy[1] = static_cast<uint64_t>(sys::gettid()) ^ reinterpret_cast<uintptr_t>(&t);
    }
    x = entropy[0] ^ rotl(entropy[1], 32) ^ index;
  }
  t.generator = splitmix64(x);
  t.seeded = true;
}

// --- The logarithm's table, computed at compile time (no libm, no start-up cost).

constexpr uint32_t kLogTableBits = 7;
constexpr uint32_t kLogTableSize = 1u << kLogTableBits;
/// The bits of the lowest z, 0.685546875: z spans [that, twice that), the 128 buckets are equal spans of z's bit
/// patterns, and the bucket holding 1 is centred on it (it spans [1 - 2^-9, 1 + 2^-8)).
constexpr uint64_t kLogOffsetBits = 0x3fe6000000000000ull - (uint64_t{1} << (51 - kLogTableBits));
/// ln 2 split: the high part has 11 zero bits at the end, so k * kLn2High is exact for every exponent k.
constexpr double kLn2High = 0x1.62e42fefa3800p-1;
constexpr double kLn2Low = 0x1.ef35793c76730p-45;

/// Double-double arithmetic (a value is hi + lo, |lo| <= ulp(hi) / 2) for the table's logarithms, exact to about
/// 2^-100: Dekker's products and Knuth's sums, which need no fused multiply-add.
struct DoubleDouble {
  double hi, lo;
};

constexpr DoubleDouble two_sum(double a, double b) {
  double s = a + b;
  double b_virtual = s - a;
  return {s, (a - (s - b_virtual)) + (b - b_virtual)};
}

constexpr DoubleDouble split(double a) {
  double t = 134217729.0 * a;  // 2^27 + 1
  double hi = t - (t - a);
  return {hi, a - hi};
}

constexpr DoubleDouble two_product(double a, double b) {
  double p = a * b;
  DoubleDouble x = split(a), y = split(b);
  return {p, ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo};
}

constexpr DoubleDouble normalized(double hi, double lo) { return two_sum(hi, lo); }

constexpr DoubleDouble operator+(DoubleDouble a, DoubleDouble b) {
  DoubleDouble s = two_sum(a.hi, b.hi);
  return normalized(s.hi, s.lo + a.lo + b.lo);
}

constexpr DoubleDouble operator*(DoubleDouble a, DoubleDouble b) {
  DoubleDouble p = two_product(a.hi, b.hi);
  return normalized(p.hi, p.lo + a.hi * b.lo + a.lo * b.hi);
}

/// n / d for doubles n, d, to double-double precision.
constexpr DoubleDouble quotient(double n, double d) {
  double q = n / d;
  DoubleDouble back = two_product(q, d);
  return normalized(q, ((n - back.hi) - back.lo) / d);
}

/// ln(c) for c in [0.5, 2] with few significant bits: 2 atanh(s), s = (c - 1) / (c + 1) (both exact), |s| < 1/3;
/// 40 terms of the odd series leave less than 2^-120 out.
constexpr DoubleDouble log_of_centre(double c) {
  DoubleDouble s = quotient(c - 1.0, c + 1.0);
  DoubleDouble s2 = s * s;
  DoubleDouble series = quotient(1.0, 81.0);
  for (int k = 39; k >= 0; --k) series = s2 * series + quotient(1.0, 2.0 * k + 1.0);
  DoubleDouble result = s * series;
  return {2.0 * result.hi, 2.0 * result.lo};
}

struct LogTableEntry {
  double centre;    ///< c, the bucket's middle (its bits are those of the middle pattern: few significant ones)
  double inverse;   ///< 1 / c rounded
  double log_high;  ///< ln(c) = log_high + log_low, log_high a multiple of 2^-42 (as kLn2High is)
  double log_low;
};

struct LogTable {
  LogTableEntry entries[kLogTableSize];
  constexpr const LogTableEntry& operator[](uint64_t i) const { return entries[i]; }
};

constexpr LogTable make_log_table() {
  LogTable table{};
  for (uint32_t i = 0; i < kLogTableSize; ++i) {
    uint64_t centre_bits =
        kLogOffsetBits + (uint64_t{i} << (52 - kLogTableBits)) + (uint64_t{1} << (51 - kLogTableBits));
    double c = __builtin_bit_cast(double, centre_bits);
    DoubleDouble log_c = log_of_centre(c);
    // On kLn2High's grid, so that k * kLn2High + log_high is exact (|ln c| < 1/2: the rounding is exact).
    double high = static_cast<double>(static_cast<int64_t>(log_c.hi * 0x1p42 + (log_c.hi < 0 ? -0.5 : 0.5))) * 0x1p-42;
    table.entries[i] = {c, 1.0 / c, high, (log_c.hi - high) + log_c.lo};
  }
  return table;
}

// 32-byte entries, aligned: one cache line per logarithm.
alignas(64) constexpr LogTable kLogTable = make_log_table();
static_assert(kLogTable[(0x3ff0000000000000ull - kLogOffsetBits) >> (52 - kLogTableBits)].centre == 1.0,
              "the bucket of 1 is centred on 1, where r is exact");
static_assert(kLogTable[(0x3ff0000000000000ull - kLogOffsetBits) >> (52 - kLogTableBits)].log_high == 0.0);

/// The scale of the draw at `sparsity` > 1: -1 / ln(1 - 1/sparsity), by log1p. Where that is +infinity (a sparsity
/// near the largest double, whose reciprocal is subnormal) it is the largest double instead, so that an exponential
/// variate of 0 times the scale is never 0 * infinity (NaN); every larger variate saturates as before.
double draw_scale_for(double sparsity) {
  double scale = -1.0 / natural_log1p(-1.0 / sparsity);
  return scale < __DBL_MAX__ ? scale : __DBL_MAX__;
}

}  // namespace

/// With E exponential of mean 1, 1 + floor(E / -ln(1 - p)) is geometric with parameter p (P(floor(E / l) >= n) =
/// e^(-n l) = (1 - p)^n). No test of NaN: E * scale is >= 0, at most +infinity, never NaN (both are finite); it
/// saturates at kNever before the conversion, which would be undefined out of range. One test: below 2^62 the skip
/// is at most 2^62 - 2^9 (the double before it), so 1 + its floor stays below kNever.
int64_t countdown_at_scale(double exponential, double scale) {
  double skip = exponential * scale;
  constexpr double kNeverAsDouble = static_cast<double>(kNever);
  return skip < kNeverAsDouble ? 1 + static_cast<int64_t>(skip) : kNever;
}

namespace {

/// natural_log(): the draw scale (at configuration) and the ziggurat's rare paths (wedges and tail) use it.
inline double log_of(double x) {
  // Table-driven (the scheme of ARM's optimized-routines log): x = 2^k z with z in [0.6855, 1.371) taken from the
  // bits, z in one of kLogTableSize buckets of centre c, and ln(x) = k ln 2 + ln(c) + ln(1 + r) with r = (z - c) / c,
  // |r| <= 2^-8, so a short polynomial suffices. No division (the table has 1/c), no data-dependent branch (half of
  // the uniforms would mispredict one), and r is exact in the bucket of 1 (c = 1), where ln(x) is smallest.
  uint64_t bits;
  __builtin_memcpy(&bits, &x, sizeof bits);
  uint64_t offset_bits = bits - kLogOffsetBits;
  const LogTableEntry& entry = kLogTable[(offset_bits >> (52 - kLogTableBits)) % kLogTableSize];
  int64_t k = static_cast<int64_t>(offset_bits) >> 52;  // arithmetic shift: the exponent, possibly negative
  uint64_t z_bits = bits - (offset_bits & (uint64_t{0xfff} << 52));
  double z;
  __builtin_memcpy(&z, &z_bits, sizeof z);
  double r = (z - entry.centre) * entry.inverse;  // z - c is exact (Sterbenz: z and c are within a factor of 2)
  double kd = static_cast<double>(k);
  // hi + lo = k ln 2 + ln(c) + r, summed without loss: w is exact (kLn2High has 11 trailing zero bits, log_high
  // is on the same grid, |w| < 2^10), and the rounding error of w + r is kept (|w| >= |r| but in the bucket of 1,
  // where w = 0).
  double w = kd * kLn2High + entry.log_high;
  double hi = w + r;
  double lo = ((w - hi) + r) + kd * kLn2Low + entry.log_low;
  // ln(1 + r) - r: Taylor terms r^2 .. r^7; the first left out is below 2^-59 |r| for |r| <= 2^-8. By pairs (Estrin).
  double r2 = r * r;
  double tail = r2 * ((-1.0 / 2 + r * (1.0 / 3)) + r2 * ((-1.0 / 4 + r * (1.0 / 5)) + r2 * (-1.0 / 6 + r * (1.0 / 7))));
  return hi + (lo + tail);
}

/// A countdown and the generator's state after it.
struct Drawn {
  int64_t countdown;
  uint64_t state;
};

/// The few draws whose first word falls outside its layer's core, out of line: inline in the refill's loop, they
/// held registers (their logarithm's constants) and the common case moved its state and reloaded its own constants
/// at every variate (docs/performance.md, "The draw: wyrand, a bank of 32").
__attribute__((noinline, cold)) Drawn draw_beyond_core(uint64_t bits, uint64_t state, const CountdownTable& table) {
  int64_t countdown = countdown_beyond_core(bits, table, [&state] { return next_random_word(state); });
  return {countdown, state};
}

/// Draws the bank's variates from the generator's `state` in order (the last entry first: it is used first) and
/// sets the countdowns by `table` of the entries below `kept` (all of them at a refill). Returns the state after.
/// Unrolled by 4: the loop's own test and branch were 3 of its 24 instructions a variate.
inline uint64_t draw_bank(uint64_t state, const CountdownTable& table, uint32_t kept) {
  uint32_t shift = table.shift;
#pragma GCC unroll 4
  for (uint32_t i = kBankSize; i-- > 0;) {
    uint64_t bits = next_random_word(state);
    int64_t countdown;
    if (__builtin_expect(countdown_in_core(bits, table), 1)) {
      countdown = core_countdown(bits, table, shift);
    } else {
      Drawn drawn = draw_beyond_core(bits, state, table);
      countdown = drawn.countdown;
      state = drawn.state;
    }
    if (i < kept) sampler_bank.countdowns[i] = countdown;
  }
  return state;
}

/// Fills the bank: out of line, once per kBankSize samples. A signal handler that samples while this runs refills
/// the bank itself (from the same state: its draws may repeat this batch's, which changes no probability); either
/// way `banked` is set only after the entries it counts are written.
__attribute__((noinline)) void refill_bank(ThreadState& t, const CountdownTable& table) {
  uint64_t start = t.generator;
  t.generator = draw_bank(start, table, kBankSize);
  t.bank_start = start;
  t.bank_generation = g_configuration;
  sampler_bank.banked = kBankSize;
}

/// The countdowns of the bank's `banked` entries left, drawn under another configuration, computed again at the
/// draw scale in force (`table`): the same variates, drawn again, so the same SAMPLER_SEED still gives the same
/// samples.
__attribute__((noinline)) void rebank(ThreadState& t, int64_t banked, const CountdownTable& table) {
  draw_bank(t.bank_start, table, static_cast<uint32_t>(banked));
  t.bank_generation = g_configuration;
}

/// The thread's next countdown with the draw in force (`table`, that of g_config).
inline int64_t next_countdown(ThreadState& t, const CountdownTable& table) {
  int64_t banked = sampler_bank.banked;
  if (__builtin_expect(banked == 0 && t.parked != 0, 0)) {  // set aside by a configuration that drew none
    banked = t.parked;
    t.parked = 0;
  }
  if (__builtin_expect(banked == 0, 0)) {
    refill_bank(t, table);
    banked = kBankSize;
  }
  if (__builtin_expect(t.bank_generation != g_configuration, 0)) rebank(t, banked, table);
  sampler_bank.banked = banked - 1;
  return sampler_bank.countdowns[banked - 1];
}

int64_t draw(ThreadState& t) {
  if (!g_config.enabled) return kNever;
  if (g_config.sparsity <= 1.0) return 1;  // every opportunity, and no variate drawn
  return next_countdown(t, g_config.countdowns);
}

}  // namespace

/// take_opportunity() when the fast path cannot: a thread's first site, sampling off or at sparsity 1, a runtime
/// still initialising, an empty bank, or a bank drawn under another configuration.
bool take_opportunity_slowly() {
  poll_interval();
  ThreadState& t = t_state;
  // Where the site left the countdown: 0, or below 0 by its weight less one (sampler/abi.h, version 3).
  int64_t reached = sampler_countdown;
  // Most calls: a ready thread whose bank ran out (or was drawn under another configuration), sampling on above
  // sparsity 1 (the only case with a draw scale). What follows would come to the same draw after its tests.
  if (__builtin_expect(t.ready && g_config.countdowns.scale != 0.0, 1)) {
    sampler_countdown = next_countdown(t, g_config.countdowns);
    return true;
  }
  bool seeded = t.seeded;  // applying a plan seeds the initialising thread (configure_plan_clock())
  bool initialized = ensure_initialized();
  if (!t.entered) {
    // The thread's first site (its countdown starts at 1, whether sampling is on or not): its alternate signal
    // stack, so that a stack overflow on it is reported too.
    t.entered = true;
    prepare_thread_for_crashes();
  }
  if (!g_config.enabled) {
    sampler_countdown = kNever;
    return false;
  }
  if (!seeded) {
    // A new thread's first opportunity: it is the first of the countdown just drawn, here or by the plan this
    // call's initialisation applied.
    int64_t first = t.seeded ? sampler_countdown : (seed_thread(t), draw(t));
    t.ready = initialized;
    // This opportunity is the first of the countdown just drawn, and took 1 - reached of it (its weight).
    int64_t left = first - 1 + (reached < 0 ? reached : 0);
    if (left > 0) {
      sampler_countdown = left;
      return false;
    }
  }
  t.ready = initialized;
  sampler_countdown = draw(t);
  return true;
}

void configure_sampling(bool enabled, double sparsity, bool seeded, uint64_t seed) {
  g_config.enabled = enabled && sparsity >= 1.0;
  g_config.sparsity = sparsity;
  g_config.seeded = seeded;
  g_config.seed = seed;
  if (g_config.enabled && sparsity > 1.0) {
    fill_countdown_table(g_config.countdowns, draw_scale_for(sparsity));
  } else {
    g_config.countdowns.scale = 0.0;
  }
  ++g_configuration;
  // The calling thread draws again with the new parameters at its next opportunity, from the same variates: its
  // bank's countdowns are computed again now (code that counts its own samples takes them without the runtime),
  // or set aside while the configuration draws none.
  ThreadState& t = t_state;
  if (sampler_bank.banked != 0 && g_config.countdowns.scale == 0.0) {
    t.parked = static_cast<uint32_t>(sampler_bank.banked);
    sampler_bank.banked = 0;
  } else if (sampler_bank.banked != 0) {
    rebank(t, sampler_bank.banked, g_config.countdowns);
  }
  sampler_countdown = 1;
}

void configure_plan_clock() {
  // countdown_at_scale(E, 2^48) = 1 + floor(E * 2^48): the clock value after a sample, in units of 2^-48 nat.
  // Whatever the sparsity: the sites' weights carry the rates (plan.h).
  g_config.enabled = true;
  g_config.sparsity = 2;  // above 1: draw() draws
  fill_countdown_table(g_config.countdowns, 0x1p48);
  ++g_configuration;
  // The initialising thread's first countdown, drawn now as its first site would draw it (the same draw, so the
  // same samples): under a plan a site of probability 0 weighs 0, and a countdown left at 1 would never be drawn
  // at all, every loop's guard and region's check reading 1 (docs/performance.md, "Loops under a plan"). A new
  // thread still draws at its first site. Already seeded (a plan applied again), it draws at its next site.
  ThreadState& t = t_state;
  if (t.seeded) {
    sampler_countdown = 1;
    return;
  }
  seed_thread(t);
  sampler_countdown = draw(t);
}

double natural_log(double x) { return log_of(x); }

double natural_log1p(double x) {
  // Goldberg's formula: with u = 1 + x rounded, ln(1 + x) = x * ln(u) / (u - 1), where u - 1 is exact; the
  // rounding of u cancels out of the ratio. Where u rounds to 1 (|x| < 2^-53), ln(1 + x) is x to double precision.
  // ln(1 - 1/S) by natural_log(1 - 1/S) would lose every digit from S = 2^53 on (1 - 1/S rounds to 1, its log to 0)
  // and most of them well before.
  double u = 1.0 + x;
  if (u == 1.0) return x;
  return natural_log(u) * x / (u - 1.0);
}

int64_t geometric_countdown(double exponential, double sparsity) {
  if (sparsity <= 1.0) return 1;
  return countdown_at_scale(exponential, draw_scale_for(sparsity));
}

void fill_countdown_table_for(CountdownTable& table, double sparsity) {
  fill_countdown_table(table, draw_scale_for(sparsity));
}

uint64_t next_timestamp() { return fetch_add_relaxed(&g_clock, uint64_t{1}) + 1; }

uint32_t seeded_thread_count() { return load_relaxed(&g_thread_count); }

}  // namespace sampler::runtime

#if defined(__x86_64__)
// sampler_take_opportunity() keeps the registers LLVM's preserve_most convention asks it to (sampler/abi.h): the
// slow sides that call it keep their values in registers across the call instead of spilling them around every
// site (it is called once per refill of the bank, so saving seven registers here costs little). GCC has no such
// convention: the saves are written out, around a call of the function itself.
extern "C" __attribute__((visibility("hidden"), used)) int sampler_take_opportunity_saving_nothing(void) {
  return sampler::runtime::take_opportunity() ? 1 : 0;
}
asm(R"(
  .text
  .globl sampler_take_opportunity
  .type sampler_take_opportunity, @function
  .p2align 4
sampler_take_opportunity:
  .cfi_startproc
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  pushq %rdx
  .cfi_adjust_cfa_offset 8
  pushq %rcx
  .cfi_adjust_cfa_offset 8
  pushq %r8
  .cfi_adjust_cfa_offset 8
  pushq %r9
  .cfi_adjust_cfa_offset 8
  pushq %r10
  .cfi_adjust_cfa_offset 8
  call sampler_take_opportunity_saving_nothing
  popq %r10
  .cfi_adjust_cfa_offset -8
  popq %r9
  .cfi_adjust_cfa_offset -8
  popq %r8
  .cfi_adjust_cfa_offset -8
  popq %rcx
  .cfi_adjust_cfa_offset -8
  popq %rdx
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  ret
  .cfi_endproc
  .size sampler_take_opportunity, . - sampler_take_opportunity
)");
#else
extern "C" SAMPLER_API int sampler_take_opportunity(void) { return sampler::runtime::take_opportunity() ? 1 : 0; }
#endif

extern "C" SAMPLER_API int sampler_sample_now(void) {
  if (--sampler_countdown > 0) return 0;
  return sampler::runtime::take_opportunity() ? 1 : 0;
}
