#pragma once
// What the prefix cache tells the outside world (issue #39, vLLM's KV-cache events): which block
// keys it now holds and which it dropped. Recorded by BlockManager at its own transitions
// (publish: active -> hashed; evict: cached -> free), so a subscriber that applies every event
// holds exactly the multiset of keys the cache holds (two blocks may share a key: a prefix
// published again after its parent was evicted, or a hash collision).
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

namespace ps {

// Consecutive blocks one publish() made reachable: keys in chain order, the key of the block
// before the first (nullopt: the first is a sequence's first block), and their tokens
// (hashes.size() * block_size of them). `root` is the chain's namespace (a LoRA adapter's).
struct BlockStored {
  std::vector<uint64_t> hashes;
  std::optional<uint64_t> parent;
  std::vector<int32_t> token_ids;
  uint64_t root = 0;
};

// A cached block evicted: its key is no longer served.
struct BlockRemoved {
  uint64_t hash = 0;
};

using BlockEvent = std::variant<BlockStored, BlockRemoved>;

}  // namespace ps
