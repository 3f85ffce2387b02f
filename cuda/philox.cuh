#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator, so draw i of a request is a pure function of (seed, step, i) and
// no state is stored or shared between sequences. Host and device share this code so the
// CPU reference in tests/cuda reproduces the device's draws exactly.
#include <cstdint>

#if defined(__CUDACC__)
#define PS_HD __host__ __device__ __forceinline__
#else
#define PS_HD inline
#endif

namespace ps::cuda {

PS_HD void philox_mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = uint64_t(a) * uint64_t(b);
  *hi = uint32_t(p >> 32);
  *lo = uint32_t(p);
}

// Returns the first of the four output words of Philox4x32-10 at counter (c0, c1, c2, 0).
PS_HD uint32_t philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t k0, uint32_t k1) {
  uint32_t x0 = c0, x1 = c1, x2 = c2, x3 = 0;
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(0xD2511F53u, x0, &hi0, &lo0);
    philox_mulhilo(0xCD9E8D57u, x2, &hi1, &lo1);
    const uint32_t y0 = hi1 ^ x1 ^ k0, y1 = lo1, y2 = hi0 ^ x3 ^ k1, y3 = lo0;
    x0 = y0, x1 = y1, x2 = y2, x3 = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return x0;
}

// Uniform in (0, 1), never 0 or 1 (the Gumbel transform takes log(-log(u))): 24 random bits
// centred in their interval.
PS_HD float philox_uniform_at(uint64_t seed, uint64_t step, uint32_t index) {
  const uint32_t r = philox4x32_10(index, uint32_t(step), uint32_t(step >> 32), uint32_t(seed),
                                   uint32_t(seed >> 32));
  return (float(r >> 8) + 0.5f) * (1.0f / 16777216.0f);
}

}  // namespace ps::cuda
