// BlockManager::check_integrity(): the invariants of docs/architecture.md §4, checked from scratch
// so a bookkeeping bug shows up at the step that caused it rather than as wrong K/V much later.
#include <stdexcept>
#include <string>
#include <vector>

#include "kvcache/block_manager.h"

namespace ps {

void BlockManager::check_integrity() const {
  const int32_t n = num_blocks();
  auto name = [](int32_t id) { return "block " + std::to_string(id); };

  // Each free-list / LRU entry is a distinct block in the matching state.
  std::vector<uint8_t> seen(n, 0);
  for (int32_t id : free_) {
    if (id < 0 || id >= n) fail("free list holds out-of-range id " + std::to_string(id));
    if (seen[id]++) fail(name(id) + " is on the free list twice");
    const Block& b = blocks_[id];
    if (b.state != State::kFree || b.ref_count != 0 || b.hashed) {
      fail(name(id) + " is on the free list but not free (ref " + std::to_string(b.ref_count) +
           ")");
    }
  }
  for (int32_t id : lru_) {
    if (id < 0 || id >= n) fail("LRU holds out-of-range id " + std::to_string(id));
    if (seen[id]++) fail(name(id) + " is both free and cached, or cached twice");
    const Block& b = blocks_[id];
    if (b.state != State::kCached || b.ref_count != 0 || !b.hashed) {
      fail(name(id) + " is in the LRU but not cached");
    }
  }

  // Ref counts equal the number of tables holding the block; no table holds a block twice.
  std::vector<int32_t> holders(n, 0);
  for (const auto& [seq, t] : tables_) {
    if (t.num_published < 0 || t.num_published > static_cast<int32_t>(t.blocks.size())) {
      fail("sequence " + std::to_string(seq) + " has more published blocks than blocks");
    }
    uint64_t parent = 0;
    bool parent_known = true;  // not after a hole: the released block's serial is not here
    for (size_t i = 0; i < t.blocks.size(); ++i) {
      const int32_t id = t.blocks[i];
      if (id < 0) {
        // A hole: release_leading() gave a published block back (or any, without caching).
        if (enable_prefix_caching_ && static_cast<int32_t>(i) >= t.num_published) {
          fail("sequence " + std::to_string(seq) + " has a hole past its published blocks");
        }
        parent_known = false;
        continue;
      }
      if (id >= n) fail("sequence " + std::to_string(seq) + " holds a bad block id");
      ++holders[id];
      if (static_cast<int32_t>(i) < t.num_published) {
        // The published prefix is one unbroken chain of cached contents.
        const Block& b = blocks_[id];
        if (!b.hashed || (parent_known && b.parent_serial != parent) || b.root != t.root) {
          fail("sequence " + std::to_string(seq) + ": published " + name(id) + " at position " +
               std::to_string(i) + " breaks the prefix chain");
        }
        parent = b.serial;
        parent_known = true;
      }
    }
    if (t.num_published > 0 && parent_known && parent != t.chain_serial) {
      fail("sequence " + std::to_string(seq) + " chain serial does not match its last block");
    }
  }

  int32_t num_active = 0;
  size_t num_hashed = 0;
  for (int32_t id = 0; id < n; ++id) {
    const Block& b = blocks_[id];
    if (b.ref_count != holders[id]) {
      fail(name(id) + " has ref count " + std::to_string(b.ref_count) + " but " +
           std::to_string(holders[id]) + " block tables hold it");
    }
    if (b.hashed) ++num_hashed;
    if (b.state == State::kActive) {
      ++num_active;
      if (seen[id]) fail(name(id) + " is active but on the free list or LRU");
      // Partial and unpublished blocks are written by their one owner; never shared.
      if (!b.hashed && b.ref_count != 1) fail(name(id) + " is unpublished but shared");
    } else if (!seen[id]) {
      fail(name(id) + " is idle but neither on the free list nor in the LRU");
    }
    if (b.hashed) {
      if (!enable_prefix_caching_) fail(name(id) + " is published with prefix caching off");
      if (static_cast<int32_t>(b.tokens.size()) != block_size_) {
        fail(name(id) + " is published but does not hold block_size tokens");
      }
      auto [lo, hi] = index_.equal_range(b.key);
      bool found = false;
      for (auto it = lo; it != hi; ++it) found |= it->second == id;
      if (!found) fail(name(id) + " is published but missing from the index");
    }
  }
  if (index_.size() != num_hashed) {
    fail("index holds " + std::to_string(index_.size()) + " entries for " +
         std::to_string(num_hashed) + " published blocks");
  }
  if (num_free_blocks() + num_cached_blocks() + num_active != n) {
    fail("free " + std::to_string(num_free_blocks()) + " + cached " +
         std::to_string(num_cached_blocks()) + " + active " + std::to_string(num_active) +
         " != total " + std::to_string(n));
  }
}

}  // namespace ps
