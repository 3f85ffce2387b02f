#pragma once
#include <cstdint>
#include <optional>
#include <random>

namespace ps {

// The random stream of one request. It is owned by the request (never shared across a batch)
// and the sampler draws exactly one uniform() per non-greedy token, so a seeded request gives
// the same tokens alone or in any batch (docs/architecture.md §5). mt19937_64 is fully specified by
// the C++ standard, and uniform() avoids std::uniform_real_distribution (implementation-defined),
// so a seed means the same stream with any standard library.
class RequestRng {
 public:
  // No seed: one from std::random_device, so unseeded requests differ from each other.
  explicit RequestRng(std::optional<uint64_t> seed);

  // Uniform in [0, 1) with 53 random bits.
  double uniform();

 private:
  std::mt19937_64 engine_;
};

}  // namespace ps
