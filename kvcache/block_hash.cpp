#include "kvcache/block_hash.h"

namespace ps {
namespace {

// splitmix64's finalizer: every input bit affects every output bit.
uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

uint64_t default_block_hash(uint64_t parent_key, std::span<const int32_t> tokens) {
  uint64_t h = mix64(parent_key ^ (0x9e3779b97f4a7c15ULL * (tokens.size() + 1)));
  for (int32_t t : tokens) {
    h = mix64(h ^ static_cast<uint32_t>(t));
  }
  return h;
}

}  // namespace ps
