#pragma once
// The recurrent-state slots of hybrid models (issue #35: Qwen3-Next / Qwen3.5's Gated DeltaNet
// layers keep a fixed-size state per sequence instead of a growing KV cache): a fixed pool sized
// at start beside the KV blocks, one slot per running sequence. No tensors: a slot id indexes
// the executor's [num_slots, ...] conv and delta-rule state tensors.
//
// Slot states and the only transitions between them:
//   free   --acquire(seq)-->  in use by seq     (admission; the executor zeroes a slot whose
//                                                sequence starts at position 0)
//   in use --release(seq)-->  free               (finish, abort or preemption: preemption
//                                                recomputes the state from the tokens)
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ps {

class StateSlotPool {
 public:
  // num_slots 0: the model has no recurrent layers, and nothing here is used.
  explicit StateSlotPool(int32_t num_slots);

  int32_t num_slots() const { return static_cast<int32_t>(owner_.size()); }
  int32_t num_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_in_use() const { return num_slots() - num_free(); }

  // free -> in use. Throws std::logic_error when seq already holds one or none is free.
  int32_t acquire(int64_t seq);
  // in use -> free. Unknown seq: no-op (finish and preemption may both release).
  void release(int64_t seq);
  // The slot seq holds, or -1.
  int32_t slot_of(int64_t seq) const;

  // Throws std::logic_error naming the first broken invariant: in use + free = pool size, each
  // free slot listed once and owned by nobody, each owner's slot owned by it.
  void check_integrity() const;

 private:
  std::vector<int64_t> owner_;  // per slot: its sequence, or -1
  std::vector<int32_t> free_;   // a stack: the most recently freed first
  std::unordered_map<int64_t, int32_t> slot_of_;
};

}  // namespace ps
