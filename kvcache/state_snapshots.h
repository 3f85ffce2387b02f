#pragma once
// Snapshots of recurrent states at block boundaries of cached prefixes (issue #35): a prefix
// hit of a hybrid model must restore its linear layers' state at the hit's end, not only the
// full-attention layers' KV blocks. A fixed number of snapshot slots, sized at start beside the
// running sequences' state slots (kvcache/state_slots.h); no tensors: a snapshot id indexes the
// executor's state tensors past the running slots.
//
// A snapshot is keyed by the serial of the KV block that ends at its boundary (BlockManager
// serials are unique per publication and the block chain is exact, so the serial names the exact
// prefix, adapter root included). A prefix whose block was evicted is never matched, so its
// snapshot is never found again and ages out.
//
// Snapshot states and the only transitions between them:
//   free    --reserve-->  pending        a step will write the state at a boundary into it
//                                        (the least recently used held one is evicted for it)
//   pending --commit-->   held (key)     its boundary block was published after the step
//   pending --abandon-->  free           the sequence went away, or its block was not published
//   held    --find-->     held           a prefix hit restores it (most recently used again)
//   held    --reserve-->  pending        evicted, least recently used first
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace ps {

class StateSnapshotStore {
 public:
  // num_snapshots 0: snapshots are off. interval_blocks: boundaries every this many blocks.
  StateSnapshotStore(int32_t num_snapshots, int32_t interval_blocks);

  bool enabled() const { return !state_.empty() && interval_blocks_ > 0; }
  int32_t num_snapshots() const { return static_cast<int32_t>(state_.size()); }
  int32_t interval_blocks() const { return interval_blocks_; }
  int32_t num_held() const { return static_cast<int32_t>(by_key_.size()); }
  int32_t num_pending() const;

  // free|held -> pending: a free snapshot, else the least recently used held one. -1 when every
  // snapshot is pending.
  int32_t reserve();
  // pending -> held under `key` (replacing an older snapshot of the same key, which goes free).
  void commit(int32_t id, uint64_t key);
  // pending -> free.
  void abandon(int32_t id);
  // The held snapshot for `key` (now the most recently used), or -1.
  int32_t find(uint64_t key);

  // Throws std::logic_error naming the first broken invariant: free + pending + held = total,
  // each held snapshot indexed once under its key and listed once in the LRU order.
  void check_integrity() const;

 private:
  enum class State : uint8_t { kFree, kPending, kHeld };
  [[noreturn]] void fail(const std::string& what) const;

  int32_t interval_blocks_;
  std::vector<State> state_;
  std::vector<uint64_t> key_;                          // held: its key
  std::vector<std::list<int32_t>::iterator> lru_pos_;  // held: its place in lru_
  std::list<int32_t> lru_;                             // held, least recently used first
  std::unordered_map<uint64_t, int32_t> by_key_;
  std::vector<int32_t> free_;
};

}  // namespace ps
