// Fair geometric sampling per thread (SPEC section 6) and the recording done when a site is sampled.
//
// Every thread has its own countdown (the exported initial-exec TLS `sampler_countdown`) and its own generator,
// seeded lazily at the thread's first opportunity from SAMPLER_SEED and a thread index (or from the system's
// entropy), without wrapping pthread_create. Each opportunity is taken independently with probability
// 1/SPARSITY: the countdown to the next sample is drawn from the geometric distribution with that parameter.
// The logarithms the draws need are computed ahead, kBankSize at a time, into a per-thread bank (sampling.cpp).
#pragma once

#include <stdint.h>

namespace sampler::runtime {

/// Sets the sampling parameters. Threads seeded before the call keep their generator but draw their next
/// countdown with the new parameters; sampling off sets every later countdown out of reach.
void configure_sampling(bool enabled, double sparsity, bool seeded, uint64_t seed);

/// The slow path of an opportunity whose countdown reached zero: seeds the thread if needed, draws the next
/// countdown, and says whether this opportunity is sampled.
bool take_opportunity();

/// Natural logarithm for 0 < x <= 1 (and any positive normal x), without libm, accurate to a few ulp.
double natural_log(double x);

/// ln(1 + x) for x > -1, accurate to a few ulp also where 1 + x rounds to 1 (libm's log1p, without libm).
double natural_log1p(double x);

/// A geometric variate with success probability 1/sparsity from a uniform 64-bit `bits`: the number of
/// opportunities up to and including the next sample, >= 1, capped at 2^62 (saturated, for any sparsity up to the
/// largest double).
int64_t geometric_countdown(uint64_t bits, double sparsity);

/// The next value of the process-wide logical clock used for timestamps (1, 2, 3, ...).
uint64_t next_timestamp();

/// The number of threads that have been seeded so far (threads that reached a site).
uint32_t seeded_thread_count();

}  // namespace sampler::runtime
