// Minimal atomics over the compiler's builtins: the runtime avoids <atomic> so that nothing of the C++ library,
// not even a header template, is part of libsampler (no libstdc++ at run time: docs/instrumenting.md).
#pragma once

#include <stdint.h>

namespace sampler::runtime {

template <typename T>
inline T load_relaxed(const T* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
template <typename T>
inline T load_acquire(const T* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
template <typename T>
inline void store_relaxed(T* p, T value) { __atomic_store_n(p, value, __ATOMIC_RELAXED); }
template <typename T>
inline void store_release(T* p, T value) { __atomic_store_n(p, value, __ATOMIC_RELEASE); }
template <typename T>
inline T fetch_add_relaxed(T* p, T value) { return __atomic_fetch_add(p, value, __ATOMIC_RELAXED); }
template <typename T>
inline T exchange(T* p, T value) { return __atomic_exchange_n(p, value, __ATOMIC_ACQ_REL); }
/// Compare-and-swap; on failure `expected` receives the current value.
template <typename T>
inline bool compare_exchange(T* p, T& expected, T desired) {
  return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/// Raises *p to at least `value`.
inline void fetch_max_relaxed(uint64_t* p, uint64_t value) {
  uint64_t current = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (current < value &&
         !__atomic_compare_exchange_n(p, &current, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

}  // namespace sampler::runtime
