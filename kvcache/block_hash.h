#pragma once
// Keys of full KV blocks in the prefix cache (docs/architecture.md §4). A block's key chains its
// parent's key, so equal keys imply (up to collisions) equal whole prefixes, not just equal blocks.
#include <cstdint>
#include <functional>
#include <span>

namespace ps {

// Key of the (virtual) parent of a sequence's first block.
inline constexpr uint64_t kRootBlockKey = 0x243f6a8885a308d3ULL;

// hash(parent key, the block's token ids). Injectable so tests can force collisions; the
// block manager must stay correct with any function, even a constant one.
using BlockHasher = std::function<uint64_t(uint64_t parent_key, std::span<const int32_t> tokens)>;

// Deterministic across runs and platforms (a splitmix64-style mix per token).
uint64_t default_block_hash(uint64_t parent_key, std::span<const int32_t> tokens);

}  // namespace ps
