// Per-thread geometric sampling (SPEC section 6): the exported countdown, lazy per-thread seeding, the draw.
// No libm (the logarithm is computed here) and no C++ library, so a C program links libsampler.a with plain gcc.
#include "sampling.h"

#include <sys/types.h>
#include <time.h>

#include "atomic.h"
#include "crash_handler.h"
#include "raw_syscall.h"
#include "runtime_state.h"
#include "sampler/abi.h"

// The fast path's countdown: decremented inline by every site (see sampler/record.h). Zero-initialised, so a new
// thread's first opportunity comes here and seeds the thread.
// (Declared extern "C" by sampler/abi.h.)
SAMPLER_API __thread int64_t sampler_countdown __attribute__((tls_model("initial-exec"))) = 0;

namespace sampler::runtime {
namespace {

/// A countdown that is never reached in practice (2^62 opportunities). Sampling off sets it, and sampler-cc's
/// functions run their copy without sites for any countdown from 2^61 (docs/instrumenting.md section 4).
constexpr int64_t kNever = int64_t{1} << 62;

struct Configuration {
  bool enabled = false;
  bool seeded = false;
  double sparsity = 0;
  double inverse_log_q = 0;  // 1 / ln(1 - 1/sparsity), by log1p; unused when sparsity == 1
  uint64_t seed = 0;
};
Configuration g_config;
uint32_t g_thread_count = 0;
uint64_t g_clock = 0;

/// Logarithms drawn ahead per thread. The logarithm is most of the cost of a draw, and on the slow path it is
/// also on the critical path (the next countdown waits for it); a batch of independent ones overlaps in the CPU
/// and costs a fraction of the same logarithms one at a time. Small, because it lives in initial-exec TLS, which
/// a dlopen()ed libsampler.so takes from the loader's static reserve (about 1.5 KB for every library).
constexpr uint32_t kBankSize = 16;

/// One thread's generator: xoshiro256** (Blackman and Vigna), seeded through splitmix64, and its bank: the
/// natural logarithms ln(u) of the next uniform variates u in (0, 1], in the generator's order. The bank holds
/// logarithms, not countdowns, so that a countdown still takes the sparsity in force when it is drawn, and the
/// countdowns are the very ones drawing each u at the time would give (the same SAMPLER_SEED, the same samples).
struct ThreadState {
  uint64_t s[4];
  double bank[kBankSize];
  uint32_t banked;  ///< entries of `bank` not used yet, the last ones (0: empty; zero-initialised)
  bool seeded;
  bool entered;  ///< the thread has been through its first entry into the runtime (prepare_thread_for_crashes)
};
__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t next_bits(ThreadState& t) {
  uint64_t result = rotl(t.s[1] * 5, 7) * 9;
  uint64_t shifted = t.s[1] << 17;
  t.s[2] ^= t.s[0];
  t.s[3] ^= t.s[1];
  t.s[1] ^= t.s[2];
  t.s[0] ^= t.s[3];
  t.s[2] ^= shifted;
  t.s[3] = rotl(t.s[3], 45);
  return result;
}

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
  for (uint64_t& word : t.s) word = splitmix64(x);
  t.seeded = true;
}

/// A uniform variate in (0, 1] from 64 random bits: 53 of them, never 0.
double uniform(uint64_t bits) { return static_cast<double>((bits >> 11) + 1) * 0x1.0p-53; }

/// 1 / ln(1 - 1/sparsity), the configured one when it is that sparsity's.
double inverse_log_q(double sparsity) {
  return (sparsity == g_config.sparsity && g_config.inverse_log_q != 0.0) ? g_config.inverse_log_q
                                                                          : 1.0 / natural_log1p(-1.0 / sparsity);
}

/// Inverse transform: with u uniform in (0, 1], 1 + floor(ln u / ln(1 - p)) is geometric with parameter p.
int64_t countdown_from_log(double log_u, double inverse_log_q) {
  if (log_u == 0.0) return 1;  // u = 1: the next opportunity (and no 0 * infinity below for a sparsity near 2^1024)
  double skip = log_u * inverse_log_q;  // > 0: both factors are < 0
  // Saturated before the conversion, which is undefined for a value out of range (and for NaN): a huge sparsity
  // gives a huge skip, never a wrapped or negative one.
  if (!(skip < static_cast<double>(kNever))) return kNever;
  if (!(skip >= 1.0)) return 1;
  return 1 + static_cast<int64_t>(skip);
}

/// Fills the bank: out of line, once per kBankSize samples. The uniforms come first (the generator is a chain),
/// then the logarithms, which are independent of one another. A signal handler that samples while this runs
/// refills the bank itself; either way `banked` is set only after the entries it counts are written.
__attribute__((noinline)) void refill_bank(ThreadState& t) {
  double u[kBankSize];
  for (double& x : u) x = uniform(next_bits(t));
  // Used from the last entry down: bank[kBankSize - 1] is the first drawn.
  for (uint32_t i = 0; i < kBankSize; ++i) t.bank[kBankSize - 1 - i] = natural_log(u[i]);
  t.banked = kBankSize;
}

/// The logarithm of the thread's next uniform variate.
double next_log(ThreadState& t) {
  uint32_t banked = t.banked;
  if (__builtin_expect(banked == 0, 0)) {
    refill_bank(t);
    banked = kBankSize;
  }
  t.banked = banked - 1;
  return t.bank[banked - 1];
}

int64_t draw(ThreadState& t) {
  if (!g_config.enabled) return kNever;
  if (g_config.sparsity <= 1.0) return 1;
  return countdown_from_log(next_log(t), inverse_log_q(g_config.sparsity));
}

}  // namespace

void configure_sampling(bool enabled, double sparsity, bool seeded, uint64_t seed) {
  g_config.enabled = enabled && sparsity >= 1.0;
  g_config.sparsity = sparsity;
  g_config.seeded = seeded;
  g_config.seed = seed;
  g_config.inverse_log_q = sparsity > 1.0 ? 1.0 / natural_log1p(-1.0 / sparsity) : 0.0;
  // The calling thread draws again with the new parameters at its next opportunity.
  sampler_countdown = 0;
}

double natural_log(double x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); ln(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| < 0.172, so the
  // odd series in z converges to double precision within 12 terms.
  // This runs once per sample (in batches: refill_bank), so it has no data-dependent branch (whether m is above
  // sqrt(2) is a coin toss for a uniform u, so a branch there mispredicts on half the draws), and the series is
  // by Estrin's scheme (pairs, then pairs of pairs): a chain of 4 multiply-adds after z2 instead of Horner's 11.
  uint64_t bits;
  __builtin_memcpy(&bits, &x, sizeof bits);
  uint64_t mantissa = bits & 0x000fffffffffffffull;
  // Mantissas above that of sqrt(2) rounded (0x6a09e667f3bcd) take the exponent 2^-1 instead of 2^0, so that
  // m is in [sqrt(1/2), sqrt(2)]; compared as integers, which orders positive doubles' mantissas the same way.
  uint64_t high = mantissa > 0x6a09e667f3bcdull ? 1 : 0;
  int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023 + static_cast<int>(high);
  bits = mantissa | ((0x3ffull - high) << 52);
  double m;
  __builtin_memcpy(&m, &bits, sizeof m);
  double z = (m - 1.0) / (m + 1.0);
  double z2 = z * z;
  double z4 = z2 * z2;
  double z8 = z4 * z4;
  // series = sum over k = 0..11 of z2^k / (2k + 1); 1/1, 1/3, ..., 1/23 written out (twelve divisions would be
  // most of the function). The terms fall by a factor of 30 or more each, so the grouping costs no accuracy.
  double p0 = 1.0 + z2 * (1.0 / 3), p1 = 1.0 / 5 + z2 * (1.0 / 7), p2 = 1.0 / 9 + z2 * (1.0 / 11);
  double p3 = 1.0 / 13 + z2 * (1.0 / 15), p4 = 1.0 / 17 + z2 * (1.0 / 19), p5 = 1.0 / 21 + z2 * (1.0 / 23);
  double q0 = p0 + z4 * p1, q1 = p2 + z4 * p3, q2 = p4 + z4 * p5;
  double series = q0 + z8 * (q1 + z8 * q2);
  return 2.0 * z * series + exponent * 0.69314718055994530942;
}

double natural_log1p(double x) {
  // Goldberg's formula: with u = 1 + x rounded, ln(1 + x) = x * ln(u) / (u - 1), where u - 1 is exact; the
  // rounding of u cancels out of the ratio. Where u rounds to 1 (|x| < 2^-53), ln(1 + x) is x to double precision.
  // ln(1 - 1/S) by natural_log(1 - 1/S) would lose every digit from S = 2^53 on (1 - 1/S rounds to 1, its log to 0)
  // and most of them well before.
  double u = 1.0 + x;
  if (u == 1.0) return x;
  return natural_log(u) * x / (u - 1.0);
}

int64_t geometric_countdown(uint64_t bits, double sparsity) {
  if (sparsity <= 1.0) return 1;
  return countdown_from_log(natural_log(uniform(bits)), inverse_log_q(sparsity));
}

bool take_opportunity() {
  ensure_initialized();
  ThreadState& t = t_state;
  if (!t.entered) {
    // The thread's first site (its countdown starts at 0, whether sampling is on or not): its alternate signal
    // stack, so that a stack overflow on it is reported too.
    t.entered = true;
    prepare_thread_for_crashes();
  }
  if (!g_config.enabled) {
    sampler_countdown = kNever;
    return false;
  }
  if (!t.seeded) {
    // A new thread's first opportunity: it is the first of the countdown just drawn.
    seed_thread(t);
    int64_t first = draw(t);
    if (first > 1) {
      sampler_countdown = first - 1;
      return false;
    }
  }
  sampler_countdown = draw(t);
  return true;
}

uint64_t next_timestamp() { return fetch_add_relaxed(&g_clock, uint64_t{1}) + 1; }

uint32_t seeded_thread_count() { return load_relaxed(&g_thread_count); }

}  // namespace sampler::runtime

extern "C" SAMPLER_API int sampler_sample_now(void) {
  if (--sampler_countdown > 0) return 0;
  return sampler::runtime::take_opportunity() ? 1 : 0;
}
