// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
//
// Every draw is a pure function of (seed, operator instance, iteration, sample index, draw
// number), so results do not depend on how many threads run or in which order they finish, and
// a GPU kernel computing the same function gets the same numbers.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace stoker {

STOKER_HD inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Philox {
 public:
  // key: the stream (seed and operator); ctr_hi: the iteration; ctr_mid: the sample index.
  STOKER_HD Philox(uint64_t key, uint64_t iteration, uint32_t sample)
      : k0_(static_cast<uint32_t>(key)), k1_(static_cast<uint32_t>(key >> 32)),
        c1_(sample), c2_(static_cast<uint32_t>(iteration)),
        c3_(static_cast<uint32_t>(iteration >> 32)) {}

  STOKER_HD uint32_t next_u32() {
    if (used_ == 4) refill();
    return out_[used_++];
  }
  STOKER_HD uint64_t next_u64() {
    uint64_t hi = next_u32();
    return (hi << 32) | next_u32();
  }
  // Uniform in [0, 1) with 24 random bits.
  STOKER_HD float uniform() { return (next_u32() >> 8) * (1.0f / 16777216.0f); }
  // Uniform in [0, 1) with 53 random bits.
  STOKER_HD double uniform_double() { return (next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform in [lo, hi).
  STOKER_HD float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), n > 0, without modulo bias.
  STOKER_HD uint32_t below(uint32_t n) {
    uint64_t m = static_cast<uint64_t>(next_u32()) * n;
    uint32_t low = static_cast<uint32_t>(m);
    if (low < n) {
      uint32_t threshold = (0u - n) % n;
      while (low < threshold) {
        m = static_cast<uint64_t>(next_u32()) * n;
        low = static_cast<uint32_t>(m);
      }
    }
    return static_cast<uint32_t>(m >> 32);
  }
  // Standard normal (Box-Muller on 53-bit uniforms).
  STOKER_HD double normal() {
    double u1 = 1.0 - uniform_double();  // (0, 1]
    double u2 = uniform_double();
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  }
  STOKER_HD bool bernoulli(double p) { return uniform_double() < p; }

 private:
  STOKER_HD static void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
    uint64_t p = static_cast<uint64_t>(a) * b;
    hi = static_cast<uint32_t>(p >> 32);
    lo = static_cast<uint32_t>(p);
  }
  STOKER_HD void refill() {
    uint32_t x0 = c0_, x1 = c1_, x2 = c2_, x3 = c3_, k0 = k0_, k1 = k1_;
    for (int r = 0; r < 10; ++r) {
      uint32_t hi0, lo0, hi1, lo1;
      mulhilo(0xD2511F53u, x0, hi0, lo0);
      mulhilo(0xCD9E8D57u, x2, hi1, lo1);
      x0 = hi1 ^ x1 ^ k0;
      x1 = lo1;
      x2 = hi0 ^ x3 ^ k1;
      x3 = lo0;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    out_[0] = x0; out_[1] = x1; out_[2] = x2; out_[3] = x3;
    ++c0_;  // the draw counter: 2^32 blocks of 4 numbers per sample and iteration
    used_ = 0;
  }

  uint32_t k0_, k1_;
  uint32_t c0_ = 0, c1_, c2_, c3_;
  uint32_t out_[4] = {0, 0, 0, 0};
  int used_ = 4;
};

// The key of one operator instance's stream under a pipeline seed.
STOKER_HD inline uint64_t rng_key(uint64_t seed, uint64_t op_instance) {
  return splitmix64(splitmix64(seed) ^ (op_instance * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
}

}  // namespace stoker
