#include "sampling/request_rng.h"

namespace ps {
namespace {

uint64_t random_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ static_cast<uint64_t>(rd());
}

}  // namespace

RequestRng::RequestRng(std::optional<uint64_t> seed) : engine_(seed ? *seed : random_seed()) {}

double RequestRng::uniform() {
  // The top 53 bits fill a double's mantissa exactly: every value is k / 2^53, never 1.0.
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

}  // namespace ps
