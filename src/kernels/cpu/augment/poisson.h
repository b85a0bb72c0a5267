// Poisson draws for noise.shot, on the host and on the device alike, so that the GPU twin draws
// what the CPU draws. A Poisson draw takes a number of random numbers that depends on the values
// drawn, so each element draws from a stream of its own (shot_stream): a GPU thread then starts
// where it needs to without knowing how many numbers the elements before it took.
#pragma once
#include <math.h>

#include <cstdint>

#include "core/random.h"

namespace stoker {
namespace kernels {

// Element k of a sample's stream (key, iteration, sample as Workspace::rng() keys it).
STOKER_HD inline Philox shot_stream(uint64_t key, uint64_t iteration, uint32_t sample, uint64_t k) {
  return Philox(splitmix64(key ^ splitmix64(k + 0x51ed27052a1f0c35ull)), iteration, sample);
}

STOKER_HD inline double log_gamma(double x) {
#ifdef __CUDA_ARCH__
  return lgamma(x);  // (thread-safe on the device)
#else
  int sign = 0;
  return lgamma_r(x, &sign);  // lgamma_r: no shared state between threads
#endif
}

// Products and sums rounded one at a time on the device too (nvcc would fuse a product into the
// sum that follows it, which the host does not), so that both sides compute the same numbers.
STOKER_HD inline double dmul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
STOKER_HD inline double dadd(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// One Poisson draw of mean `lambda` >= 0: inversion below 10, Hoermann's PTRS above
// (W. Hoermann, "The transformed rejection method for generating Poisson random variables",
// Insurance: Mathematics and Economics 12, 1993). The device's exp, log and lgamma may differ
// from the host's by an ulp, which changes a draw only when a uniform falls within an ulp of a
// boundary.
STOKER_HD inline double poisson(double lambda, Philox& rng) {
  if (!(lambda > 0)) return 0;
  if (lambda < 10) {
    // Inversion: walk up the cumulative distribution until it passes one uniform draw.
    const double u = rng.uniform_double();
    double p = exp(-lambda), cdf = p;
    double k = 0;
    while (u > cdf) {
      k = dadd(k, 1.0);
      p = dmul(p, lambda / k);
      const double next = dadd(cdf, p);
      if (next == cdf) break;  // the tail is below double resolution
      cdf = next;
    }
    return k;
  }
  const double slam = sqrt(lambda), loglam = log(lambda);
  const double b = dadd(0.931, dmul(2.53, slam));
  const double a = dadd(-0.059, dmul(0.02483, b));
  const double inv_alpha = dadd(1.1239, 1.1328 / dadd(b, -3.4));
  const double v_r = dadd(0.9277, -(3.6224 / dadd(b, -2.0)));
  for (;;) {
    const double u = dadd(rng.uniform_double(), -0.5);
    const double v = rng.uniform_double();
    const double us = dadd(0.5, -fabs(u));
    const double k = floor(dadd(dadd(dmul(dadd(dmul(2.0, a) / us, b), u), lambda), 0.43));
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    const double lhs = dadd(dadd(log(v), log(inv_alpha)), -log(dadd(a / dmul(us, us), b)));
    const double rhs = dadd(dadd(-lambda, dmul(k, loglam)), -log_gamma(dadd(k, 1.0)));
    if (lhs <= rhs) return k;
  }
}

}  // namespace kernels
}  // namespace stoker
