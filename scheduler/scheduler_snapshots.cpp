// Recurrent-state snapshots for a hybrid model's prefix hits (kvcache/state_snapshots.h): which
// boundary a hit may reach, which boundaries a step's prefill chunks cross and so snapshot, and
// their commit once the step's blocks are published.
#include <algorithm>

#include "scheduler/scheduler.h"

namespace ps {

KvMatch Scheduler::match_with_state(const Sequence& seq, uint64_t root, int32_t* snapshot) {
  *snapshot = -1;
  if (!snapshots_.enabled()) return kv_.no_match(root);
  const KvMatch full = kv_.match_prefix(seq.tokens(), root);
  const int32_t every = snapshots_.interval_blocks();
  const auto& blocks = full.full.blocks;
  // The longest boundary of the match (every `every` blocks) whose state is held: the blocks'
  // serials name the exact prefix, so its snapshot is the state of these very tokens.
  for (auto n = static_cast<int32_t>(blocks.size()) / every * every; n > 0; n -= every) {
    const int32_t id = snapshots_.find(kv_.full().serial_of(blocks[size_t(n) - 1]));
    if (id < 0) continue;
    *snapshot = id;
    return kv_.cut(full, n);
  }
  return kv_.no_match(root);
}

void Scheduler::plan_snapshots(Step& step) {
  // A plan that was never postprocessed wrote nothing anyone will commit.
  for (const PendingSnapshot& p : pending_snapshots_) snapshots_.abandon(p.snapshot);
  pending_snapshots_.clear();
  if (!snapshots_.enabled()) return;
  const int32_t interval = snapshots_.interval_blocks() * config_.block_size;
  for (const Sequence* seq : step.scheduled) {
    // Boundaries within the prompt that this chunk computes, (begin, end], deepest first: a
    // deeper snapshot serves every longer shared prefix, so when few are left they go to it.
    const int32_t begin = seq->num_computed_tokens();
    const int32_t end = std::min(begin + seq->scheduled_tokens_, seq->num_prompt_tokens());
    const size_t first = step.snapshots.size();
    for (int32_t b = end / interval * interval; b > begin; b -= interval) {
      const int32_t id = snapshots_.reserve();  // free|held -> pending
      if (id < 0) break;                        // every snapshot is being written this step
      step.snapshots.push_back({seq, b, id});
      pending_snapshots_.push_back({seq->id(), b, id});
    }
    // The executor takes a sequence's snapshots in row order.
    std::reverse(step.snapshots.begin() + static_cast<ptrdiff_t>(first), step.snapshots.end());
  }
}

void Scheduler::settle_snapshots() {
  const int32_t bs = config_.block_size;
  for (const PendingSnapshot& p : pending_snapshots_) {
    const Sequence* seq = lookup(p.seq);
    // The boundary block must be computed and published: its serial is the snapshot's key.
    const bool kept = seq != nullptr && seq->status() == SeqStatus::kRunning &&
                      seq->num_computed_tokens() >= p.num_tokens &&
                      kv_.full().num_published(p.seq) >= p.num_tokens / bs;
    if (kept) {
      snapshots_.commit(p.snapshot,
                        kv_.full().serial_of(seq->block_table()[size_t(p.num_tokens / bs) - 1]));
    } else {
      snapshots_.abandon(p.snapshot);
    }
  }
  pending_snapshots_.clear();
}

}  // namespace ps
