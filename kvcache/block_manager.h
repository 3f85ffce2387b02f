#pragma once
// The paged KV-cache bookkeeping (docs/architecture.md §4): a fixed pool of blocks, one block table
// per sequence, reference counts, and the prefix cache of full blocks. No tensors: block ids here
// index the model's [num_blocks, block_size, ...] K/V tensors.
//
// Block states and the only transitions between them:
//   free   --take-->    active (ref 1)
//   active --share-->   active (ref + 1)           a prefix-cache hit or a deduplicated block
//   cached --share-->   active (ref 1)             a prefix-cache hit on an idle block
//   active --release--> active (ref - 1) | cached (ref 0, hashed) | free (ref 0, not hashed)
//   cached --evict-->   free                       least recently used first
#include <cstdint>
#include <list>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvcache/block_events.h"
#include "kvcache/block_hash.h"

namespace ps {

// The result of walking a token sequence's full blocks through the prefix cache.
struct PrefixMatch {
  std::vector<int32_t> blocks;   // cached blocks covering tokens [0, num_tokens)
  int32_t num_tokens = 0;        // blocks.size() * block_size
  int32_t num_query_tokens = 0;  // tokens the lookup was for (for hit-rate accounting)
  int32_t num_idle = 0;          // matched blocks now cached with ref 0 (leave the evictable pool)
  uint64_t chain_key = kRootBlockKey;  // key and serial of the last matched block
  uint64_t chain_serial = 0;
  uint64_t root = kRootBlockKey;  // the chain's namespace (match_prefix's `root`)
};

class BlockManager {
 public:
  // hasher: empty means default_block_hash. Throws std::invalid_argument on non-positive sizes.
  BlockManager(int32_t num_blocks, int32_t block_size, bool enable_prefix_caching,
               BlockHasher hasher = {});

  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  int32_t block_size() const { return block_size_; }
  bool prefix_caching_enabled() const { return enable_prefix_caching_; }

  int32_t num_free_blocks() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_cached_blocks() const { return static_cast<int32_t>(lru_.size()); }
  int32_t num_active_blocks() const {
    return num_blocks() - num_free_blocks() - num_cached_blocks();
  }
  // Blocks a sequence can still get: free ones plus idle cached ones (evicted on demand).
  int32_t num_available_blocks() const { return num_free_blocks() + num_cached_blocks(); }

  // Prefix-cache accounting, in tokens, over every allocate() with caching enabled.
  uint64_t prefix_queries() const { return prefix_queries_; }
  uint64_t prefix_hits() const { return prefix_hits_; }

  int32_t blocks_for_tokens(int32_t num_tokens) const {
    return (num_tokens + block_size_ - 1) / block_size_;
  }

  // Longest run of leading full blocks of `tokens` held by the prefix cache, never covering
  // the last token (so the model always computes at least one token and has logits).
  // Read-only; valid until the next mutating call. `root` starts the hash chain: sequences
  // whose K/V differ for the same tokens (another LoRA adapter) pass different roots, and a
  // block published under one root never matches under another, even on a key collision.
  PrefixMatch match_prefix(std::span<const int32_t> tokens, uint64_t root = kRootBlockKey) const;

  // Whether a new sequence reusing `match` can hold `num_slots` tokens without taking a block
  // that some sequence is using.
  bool can_allocate(const PrefixMatch& match, int32_t num_slots) const;
  // Creates seq's block table: the matched blocks (shared), then fresh blocks up to
  // `num_slots` tokens. Precondition: no table for seq, can_allocate(match, num_slots).
  void allocate(int64_t seq, const PrefixMatch& match, int32_t num_slots);

  // New blocks seq needs to hold `num_slots` tokens (0 if its table already covers them).
  int32_t blocks_needed(int64_t seq, int32_t num_slots) const;
  // Grows seq's table to hold `num_slots` tokens, evicting idle cached blocks if needed.
  // Returns false and changes nothing when the pool cannot supply the blocks.
  bool append_slots(int64_t seq, int32_t num_slots);

  // Shrinks seq's table to the blocks `num_slots` tokens need: the rollback of slots that a
  // step reserved for speculative draft tokens that were then rejected. The dropped tail
  // blocks hold no committed full block, so they were never published: they go back to the
  // free list (active -> free). Throws std::logic_error if one is published or shared.
  void truncate(int64_t seq, int32_t num_slots);

  // Publishes seq's blocks that are full and whose K/V is computed (`num_computed` tokens of
  // `tokens`) to the prefix cache. A block whose content is already cached is replaced in the
  // table by the cached copy, and the duplicate returns to the free list.
  void publish(int64_t seq, std::span<const int32_t> tokens, int32_t num_computed);

  // Sliding-window pools (kvcache/kv_pools.h): gives back seq's leading blocks [0, num_blocks)
  // that no later query can attend to, leaving holes (-1) in the table so that positions keep
  // their block index. With prefix caching, only published blocks are released (they stay
  // cached, so a later prefix match may still find them); a block past the published ones is
  // kept. Holes are never re-filled: a preempted sequence starts a new table. Returns how many
  // blocks were released.
  int32_t release_leading(int64_t seq, int32_t num_blocks);
  // Blocks seq's table holds (its entries that are not holes).
  int32_t num_held_blocks(int64_t seq) const;
  // `match` cut to its first `num_blocks` blocks (the chain ends at the last one kept). Throws
  // std::logic_error if that one is a hole.
  PrefixMatch shorten(const PrefixMatch& match, int32_t num_blocks) const;

  // Twins (kvcache/kv_pools.h): a sliding pool's published block is tagged with the serial of
  // the full pool's block at the same position of the same sequence. Serials are never reused
  // and the full pool's chain is exact, so a twin names the exact prefix the block's K/V was
  // computed from, without this pool holding the blocks before it.
  void set_twins(int64_t seq, int32_t from_block, std::span<const uint64_t> full_serials);
  // A published block with this key and twin, or -1.
  int32_t find_twin(uint64_t key, uint64_t twin) const;
  // A match made of `blocks` (published ids, -1 for positions the caller will not read), its
  // chain continuing from the last one. Throws std::logic_error if that one is a hole.
  PrefixMatch match_of(std::vector<int32_t> blocks, int32_t num_query_tokens, uint64_t root) const;
  uint64_t key_of(int32_t id) const { return blocks_[id].key; }
  uint64_t serial_of(int32_t id) const { return blocks_[id].serial; }
  int32_t num_published(int64_t seq) const;

  // Drops seq's table; its published blocks stay cached when no one else holds them.
  // Unknown seq: no-op (finish and preemption may both release).
  void free(int64_t seq);

  bool has_table(int64_t seq) const { return tables_.count(seq) != 0; }
  // The sequences holding a table, in increasing order.
  std::vector<int64_t> table_ids() const;
  // Empty for a sequence without blocks; -1 where release_leading() left a hole.
  const std::vector<int32_t>& block_table(int64_t seq) const;

  // KV-cache events (block_events.h): off by default. While on, publish() and eviction record
  // them; take_events() hands over what was recorded since the last call, in order.
  void set_record_events(bool on) { record_events_ = on; }
  std::vector<BlockEvent> take_events();
  // Every key the prefix cache holds (active or cached), once per block holding it.
  std::vector<uint64_t> published_keys() const;

  // Throws std::logic_error naming the first violated invariant: free + cached + active =
  // total, ref counts = number of tables holding the block, index and LRU consistent.
  void check_integrity() const;

 private:
  enum class State : uint8_t { kFree, kCached, kActive };

  struct Block {
    State state = State::kFree;
    int32_t ref_count = 0;
    bool hashed = false;            // reachable through index_
    uint64_t key = 0;               // valid when hashed
    uint64_t serial = 0;            // unique per publication; identifies the exact prefix
    uint64_t parent_serial = 0;     // serial of the previous block in the chain (0: first)
    uint64_t root = kRootBlockKey;  // the chain's namespace
    uint64_t twin = 0;              // set_twins(); 0: none
    std::vector<int32_t> tokens;    // kept to compare on a hit: a key collision must not match
    std::list<int32_t>::iterator lru_pos;  // valid when cached
  };

  struct Table {
    std::vector<int32_t> blocks;
    int32_t num_published = 0;  // leading blocks that went through publish()/match
    uint64_t chain_key = kRootBlockKey;
    uint64_t chain_serial = 0;
    uint64_t root = kRootBlockKey;
  };

  int32_t take();            // free|cached -> active (ref 1)
  void share(int32_t id);    // cached|active -> active (ref + 1)
  void release(int32_t id);  // active -> active|cached|free
  void evict(int32_t id);    // cached -> free
  void index(int32_t id, uint64_t key, uint64_t parent_serial, uint64_t root,
             std::span<const int32_t> tokens);
  int32_t lookup(uint64_t key, uint64_t parent_serial, uint64_t root,
                 std::span<const int32_t> tokens) const;
  Table& table_of(int64_t seq);
  [[noreturn]] void fail(const std::string& what) const;

  int32_t block_size_;
  bool enable_prefix_caching_;
  BlockHasher hasher_;
  std::vector<Block> blocks_;
  std::vector<int32_t> free_;  // a stack: recently freed blocks are reused first
  std::list<int32_t> lru_;     // cached blocks, least recently used at the front
  std::unordered_multimap<uint64_t, int32_t> index_;  // key -> hashed block (collisions allowed)
  std::unordered_map<int64_t, Table> tables_;
  uint64_t next_serial_ = 1;
  uint64_t prefix_queries_ = 0;
  uint64_t prefix_hits_ = 0;
  bool record_events_ = false;
  std::vector<BlockEvent> events_;
};

}  // namespace ps
