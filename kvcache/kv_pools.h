#pragma once
// The KV cache's block pools, one per attention kind (docs/architecture.md §4).
//
// A model whose layers all attend to the whole context has one pool, the BlockManager alone.
// A model that mixes sliding-window and full layers (Gemma 2/3, gpt-oss) keeps its sliding
// layers' K/V in a second pool with a block table of its own per sequence, and gives a
// sequence's blocks there back once no later query can attend to them (release_outside_window):
// a long conversation holds full-context K/V only for its global layers, and a window's worth
// for the others. Both pools use the same block size, so block i of either table covers the same
// positions; a released entry is a hole (-1) that no kernel reads (paged_attention.h).
//
// Every call that changes tables changes both pools or neither, so the pools always describe
// the same sequences. A prefix hit is the full pool's match, cut to where the sliding pool still
// has the blocks the hit's window reads: released sliding blocks stay in their pool's prefix
// cache until evicted, and each is tagged with its full-pool twin (BlockManager::set_twins), so
// a hit needs only the window's blocks there, not the whole chain from the start.
#include <cstdint>
#include <memory>
#include <span>

#include "kvcache/block_manager.h"

namespace ps {

struct KvPoolsConfig {
  int32_t num_blocks = 0;          // the full-attention pool (every layer's, without a split)
  int32_t num_sliding_blocks = 0;  // > 0: the sliding-window layers' own pool
  int32_t sliding_window = 0;      // W: a query at position p attends to [p - W + 1, p]
  int32_t block_size = 16;
  bool enable_prefix_caching = true;
  BlockHasher hasher = {};  // empty: default_block_hash
};

// A prefix match in every pool, cut to the same length.
struct KvMatch {
  PrefixMatch full;
  PrefixMatch sliding;  // unused without a sliding pool
  int32_t num_tokens() const { return full.num_tokens; }
};

class KvPools {
 public:
  // Throws std::invalid_argument on non-positive sizes, or a sliding pool without a window.
  explicit KvPools(KvPoolsConfig config);

  bool has_sliding_pool() const { return sliding_ != nullptr; }
  int32_t sliding_window() const { return config_.sliding_window; }
  int32_t block_size() const { return config_.block_size; }
  const BlockManager& full() const { return full_; }
  BlockManager& full() { return full_; }
  // Null without a sliding pool.
  const BlockManager* sliding() const { return sliding_.get(); }

  // A match of nothing (a sequence that computes every prompt row), under `root`.
  KvMatch no_match(uint64_t root) const;
  // The full pool's match, cut to where the sliding pool has every block its window reads
  // (twins of the full match's blocks); the sliding match has holes before the window.
  KvMatch match_prefix(std::span<const int32_t> tokens, uint64_t root) const;
  // `match` cut to its first `num_blocks` blocks (a recurrent model's hit ends where a state
  // snapshot is held). Without a sliding pool only: throws std::logic_error with one.
  KvMatch cut(const KvMatch& match, int32_t num_blocks) const;
  bool can_allocate(const KvMatch& match, int32_t num_slots) const;
  void allocate(int64_t seq, const KvMatch& match, int32_t num_slots);
  // The most tokens seq's tables can cover with what the pools have left (0 with no table).
  int32_t max_slots(int64_t seq) const;
  // Grows every table to `num_slots` tokens, or changes nothing and returns false.
  bool append_slots(int64_t seq, int32_t num_slots);
  void truncate(int64_t seq, int32_t num_slots);
  void publish(int64_t seq, std::span<const int32_t> tokens, int32_t num_computed);
  // After seq's first `num_computed` tokens are in the cache, its next query sits at position
  // num_computed: sliding blocks wholly before num_computed - W + 1 go back to their pool.
  // Returns the blocks released (0 without a sliding pool).
  int32_t release_outside_window(int64_t seq, int32_t num_computed);
  void free(int64_t seq);
  // The first block a query at `position` reads in a sliding layer.
  int32_t first_block_in_window(int32_t position) const;

  // Both pools' check_integrity(), and that they hold tables for the same sequences.
  void check_integrity() const;

 private:
  KvPoolsConfig config_;
  BlockManager full_;
  std::unique_ptr<BlockManager> sliding_;
};

}  // namespace ps
