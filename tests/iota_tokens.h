#pragma once
// Token ids first, first + 1, ...: the prompts of the kvcache and scheduler tests, where only
// their count and distinctness matter.
#include <cstdint>
#include <numeric>
#include <vector>

namespace ps::testing {

inline std::vector<int32_t> iota_tokens(int32_t n, int32_t first = 0) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

}  // namespace ps::testing
