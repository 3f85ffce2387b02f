// Scheduler::check_integrity(): the sequence-side invariants, on top of the block manager's.
// Meant between steps (after postprocess/finish), as the tests and the engine's debug mode do.
#include <iterator>
#include <stdexcept>
#include <string>

#include "scheduler/scheduler.h"

namespace ps {

namespace {

[[noreturn]] void fail(const Sequence& seq, const std::string& what) {
  throw std::logic_error("Scheduler: sequence " + std::to_string(seq.id()) + " " + what);
}

}  // namespace

void Scheduler::check_integrity() const {
  kv_.check_integrity();
  states_.check_integrity();
  snapshots_.check_integrity();
  if (states_.num_slots() > 0 && states_.num_in_use() != num_running()) {
    throw std::logic_error("Scheduler: " + std::to_string(states_.num_in_use()) +
                           " state slots in use for " + std::to_string(num_running()) +
                           " running sequences");
  }
  if (seqs_.size() != running_.size() + waiting_.size()) {
    throw std::logic_error("Scheduler: " + std::to_string(seqs_.size()) + " sequences but " +
                           std::to_string(running_.size()) + " running + " +
                           std::to_string(waiting_.size()) + " waiting");
  }
  if (num_running() > config_.max_num_seqs) {
    throw std::logic_error("Scheduler: more running sequences than max_num_seqs");
  }
  const int32_t bs = config_.block_size;
  for (auto it = running_.begin(); it != running_.end(); ++it) {
    const Sequence& seq = **it;
    if (seq.status() != SeqStatus::kRunning) fail(seq, "is in the running queue but not running");
    if (seq.queue_pos_ != it || lookup(seq.id()) != &seq) fail(seq, "has a stale queue position");
    if (seq.scheduled_tokens_ != 0) fail(seq, "is still scheduled between steps");
    if (!seq.draft_.empty()) fail(seq, "keeps draft tokens between steps");
    if (seq.num_uncomputed_tokens() < 1) fail(seq, "has no token left to compute");
    if (states_.num_slots() > 0 && states_.slot_of(seq.id()) < 0) {
      fail(seq, "runs without a state slot");
    }
    const auto held = static_cast<int32_t>(seq.block_table().size());
    if (held * bs < seq.num_computed_tokens() ||
        held > kv_.full().blocks_for_tokens(seq.num_tokens())) {
      fail(seq, "holds " + std::to_string(held) + " blocks for " +
                    std::to_string(seq.num_computed_tokens()) + " computed of " +
                    std::to_string(seq.num_tokens()) + " tokens");
    }
  }
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    const Sequence& seq = **it;
    if (config_.policy == SchedulingPolicy::kPriority && it != waiting_.begin() &&
        ranks_before(seq, **std::prev(it))) {
      fail(seq, "waits behind a sequence of lower priority");
    }
    if (seq.status() != SeqStatus::kWaiting) fail(seq, "is in the waiting queue but not waiting");
    if (seq.queue_pos_ != it || lookup(seq.id()) != &seq) fail(seq, "has a stale queue position");
    if (seq.num_computed_tokens() != 0 || kv_.full().has_table(seq.id())) {
      fail(seq, "is waiting but holds computed tokens or blocks");
    }
    if (states_.slot_of(seq.id()) >= 0) fail(seq, "is waiting but holds a state slot");
  }
}

}  // namespace ps
