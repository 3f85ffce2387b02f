#pragma once
// Seeded standard-normal floats for the kernel and tuner tests.
#include <cstdint>
#include <random>
#include <vector>

namespace ps::testing_util {

inline std::vector<float> randn(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace ps::testing_util
