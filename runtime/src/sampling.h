// Fair geometric sampling per thread (docs/instrumenting.md section 2) and the recording done when a site is sampled.
//
// Every thread has its own countdown (the exported initial-exec TLS `sampler_countdown`) and its own generator,
// seeded lazily at the thread's first opportunity from SAMPLER_SEED and a thread index (or from the system's
// entropy), without wrapping pthread_create. Each opportunity is taken independently with probability
// 1/SPARSITY: the countdown to the next sample is drawn from the geometric distribution with that parameter, as
// an exponential variate (ziggurat.h) scaled. The variates are drawn ahead, kBankSize at a time, into a
// per-thread bank (sampling.cpp), whose countdowns are the exported `sampler_bank` (sampler/abi.h: code that counts
// its own samples draws from it without a call).
#pragma once

#include <stdint.h>

#include "sampler/abi.h"

namespace sampler::runtime {

/// Sets the sampling parameters. Threads seeded before the call keep their generator but draw their next
/// countdown with the new parameters; sampling off sets every later countdown out of reach.
void configure_sampling(bool enabled, double sparsity, bool seeded, uint64_t seed);

/// Under a sampling plan (plan.h): the countdowns are Exp(1) draws on the fixed-point clock (2^48 units per nat),
/// whatever the sparsity. Call after configure_sampling(), at start-up.
void configure_plan_clock();

/// Countdowns drawn ahead per thread: on the slow path the next countdown waits for its draw, and a batch of
/// independent ones overlaps in the CPU. Small, because it lives in initial-exec TLS, which a dlopen()ed
/// libsampler.so takes from the loader's static reserve (about 1.5 KB for every library): ThreadState and the
/// bank together stay within 320 bytes.
constexpr uint32_t kBankSize = SAMPLER_BANK_SIZE;

/// The per-thread generator: wyrand (Wang Yi's, from the wyhash project): a 64-bit counter stepped by an odd
/// constant, each step mixed by one 64 x 64 -> 128-bit multiplication whose halves are folded together. It passes
/// TestU01's BigCrush and PractRand (docs/decisions.md, "The generator: wyrand"); the ziggurat takes its words in
/// order, one a variate in 97.8 % of draws.
inline uint64_t next_random_word(uint64_t& state) {
  state += 0xa0761d6478bd642full;
  __uint128_t product = static_cast<__uint128_t>(state) * (state ^ 0xe7037ed1a0b428dbull);
  return static_cast<uint64_t>(product >> 64) ^ static_cast<uint64_t>(product);
}

/// One thread's generator, seeded through splitmix64, and what its bank was drawn from: the bank's countdowns are
/// those of the generator's next exponential variates of mean 1 (ziggurat.h), drawn in order, at the sparsity of
/// the refill. A configuration that changes the sparsity draws the same variates again from `bank_start` (the
/// bank's entries left get the new sparsity's countdowns), so that the countdowns are the very ones drawing each
/// variate at the time would give (the same SAMPLER_SEED, the same samples) without keeping the variates.
struct ThreadState {
  uint64_t generator;   ///< wyrand's state (next_random_word)
  uint64_t bank_start;  ///< the generator's state before the bank's variates were drawn
  uint32_t bank_generation;  ///< the configuration (g_configuration) whose sparsity made the bank's countdowns
  uint32_t parked;  ///< while the configuration draws no variate, the bank's entries left (sampler_bank.banked is 0)
  bool seeded;
  bool entered;  ///< the thread has been through its first entry into the runtime (prepare_thread_for_crashes)
  bool ready;    ///< entered and seeded, and the runtime's initialisation complete: only the draw is left to do
};
static_assert(sizeof(ThreadState) + sizeof(sampler_bank) <= 320, "initial-exec TLS: see kBankSize");
extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

/// Counts the calls of configure_sampling(): a bank's countdowns are those of the configuration of its generation.
extern uint32_t g_configuration;

/// take_opportunity() when its fast path cannot: the rest of it.
bool take_opportunity_slowly();

/// The fast path of take_opportunity(), alone: in one test, the thread is ready (see ThreadState) and its bank holds
/// countdowns drawn under the configuration in force (which therefore samples, above sparsity 1: only the draw
/// fills the bank). Then it sets the next countdown (this opportunity is sampled) and returns true; otherwise it
/// changes nothing and take_opportunity_slowly() decides.
inline bool draw_from_bank() {
  ThreadState& t = t_state;
  int64_t banked = sampler_bank.banked;
  if (__builtin_expect(t.ready & (banked != 0) & (t.bank_generation == g_configuration), 1)) {
    sampler_bank.banked = banked - 1;
    sampler_countdown = sampler_bank.countdowns[banked - 1];
    return true;
  }
  return false;
}

/// The slow path of an opportunity whose countdown reached zero: seeds the thread if needed, draws the next
/// countdown, and says whether this opportunity is sampled. Inline, for the recording helpers.
inline bool take_opportunity() { return draw_from_bank() || take_opportunity_slowly(); }

/// Natural logarithm for 0 < x <= 1 (and any positive normal x), without libm, within 1 ulp (table-driven).
double natural_log(double x);

/// ln(1 + x) for x > -1, accurate to a few ulp also where 1 + x rounds to 1 (libm's log1p, without libm).
double natural_log1p(double x);

/// A geometric variate with success probability 1/sparsity from an exponential variate of mean 1 (ziggurat.h):
/// 1 + floor(exponential / -ln(1 - 1/sparsity)), the number of opportunities up to and including the next sample,
/// >= 1, capped at 2^62 (saturated, for any sparsity up to the largest double).
int64_t geometric_countdown(double exponential, double sparsity);

/// 1 + floor(exponential * scale) for scale > 0 (the draw scale of a sparsity, or a plan's clock), saturated at 2^62.
int64_t countdown_at_scale(double exponential, double scale);

struct CountdownTable;
/// The table of the countdowns' draw at `sparsity` (> 1), as configure_sampling() makes it (ziggurat.h).
void fill_countdown_table_for(CountdownTable& table, double sparsity);

/// The next value of the process-wide logical clock used for timestamps (1, 2, 3, ...).
uint64_t next_timestamp();

/// The number of threads that have been seeded so far (threads that reached a site).
uint32_t seeded_thread_count();

}  // namespace sampler::runtime
