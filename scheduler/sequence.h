#pragma once
// One request's tokens and where it stands in the scheduler (docs/architecture.md §3).
//
//   waiting --admit-->   running       blocks allocated for its first chunk
//   running --preempt--> waiting       blocks freed, computed reset: recomputed later
//   waiting|running --finish--> finished
//
// Only the Scheduler moves a sequence between states; everyone else reads.
#include <cstdint>
#include <list>
#include <span>
#include <vector>

#include "kvcache/block_manager.h"
#include "scheduler/step_plan.h"

namespace ps {

enum class SeqStatus { kWaiting, kRunning, kFinished };

// The LoRA adapter a sequence runs with (issue #22): the runner slot holding its factors (-1:
// the base model) and the root its prefix-cache chain hashes from, so that K/V computed under
// one adapter is never served to another. Fixed for the sequence's life, preemptions included.
struct SeqAdapter {
  int32_t slot = -1;
  uint64_t prefix_root = kRootBlockKey;
};

const char* to_string(SeqStatus status);

class Sequence {
 public:
  // `blocks` owns the block table; it must outlive the sequence.
  Sequence(SeqId id, std::vector<int32_t> prompt_ids, const BlockManager* blocks,
           SeqAdapter adapter = {});

  SeqId id() const { return id_; }
  SeqStatus status() const { return status_; }
  const SeqAdapter& adapter() const { return adapter_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }  // prompt + output
  int32_t num_tokens() const { return static_cast<int32_t>(tokens_.size()); }
  int32_t num_prompt_tokens() const { return num_prompt_tokens_; }
  int32_t num_output_tokens() const { return num_tokens() - num_prompt_tokens_; }
  std::span<const int32_t> output_tokens() const {
    return std::span<const int32_t>(tokens_).subspan(num_prompt_tokens_);
  }
  int32_t last_token() const { return tokens_.back(); }
  // Tokens whose K/V is in the cache. The rest (at least the last token) are still to compute.
  int32_t num_computed_tokens() const { return num_computed_; }
  int32_t num_uncomputed_tokens() const { return num_tokens() - num_computed_; }
  // Prompt tokens the prefix cache served at the first admission (later re-admissions after
  // preemption do not change it).
  int32_t num_cached_prompt_tokens() const { return num_cached_prompt_tokens_; }
  int32_t num_preemptions() const { return num_preemptions_; }
  const std::vector<int32_t>& block_table() const { return blocks_->block_table(id_); }
  // Speculative decoding: the draft tokens the step being built verifies after the last token
  // (empty between steps), and the token count drafts may reach (0: this sequence never drafts).
  const std::vector<int32_t>& draft() const { return draft_; }
  int32_t speculation_limit() const { return speculation_limit_; }
  // Its prompt rows return logits (Scheduler::want_prompt_logits).
  bool prompt_logits() const { return prompt_logits_; }
  // Under SchedulingPolicy::kPriority: lower values are admitted first and preempted last.
  int32_t priority() const { return priority_; }
  // The order add() saw it in; ties between equal priorities go to the older.
  uint64_t arrival() const { return arrival_; }

 private:
  friend class Scheduler;

  void admit(int32_t num_cached_tokens);  // waiting -> running
  void preempt();                         // running -> waiting
  void finish();                          // waiting|running -> finished
  void advance(int32_t num_tokens);       // running: K/V of num_tokens more tokens written
  void append(int32_t token);             // running: a sampled token
  // running: the verified tokens of a step that drafted (verified.size() - 1 drafts accepted,
  // then the token sampled after them); the K/V of the rejected drafts is dropped.
  void accept(std::span<const int32_t> verified);

  SeqId id_;
  SeqStatus status_ = SeqStatus::kWaiting;
  SeqAdapter adapter_;
  std::vector<int32_t> tokens_;
  int32_t num_prompt_tokens_;
  int32_t num_computed_ = 0;
  int32_t num_cached_prompt_tokens_ = 0;
  int32_t num_preemptions_ = 0;
  bool admitted_before_ = false;
  const BlockManager* blocks_;
  // The scheduler's bookkeeping: where the sequence sits in its queue (O(1) removal), and
  // how many tokens the step being built gives it.
  std::list<Sequence*>::iterator queue_pos_;
  int32_t scheduled_tokens_ = 0;  // including the draft
  std::vector<int32_t> draft_;
  int32_t speculation_limit_ = 0;
  bool prompt_logits_ = false;
  int32_t priority_ = 0;
  uint64_t arrival_ = 0;
};

}  // namespace ps
