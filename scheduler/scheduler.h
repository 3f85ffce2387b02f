#pragma once
// Continuous batching (docs/architecture.md §3): which sequences run this step, with how many
// tokens, in which KV blocks. One engine thread calls schedule() -> model -> postprocess() ->
// finish().
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kvcache/kv_pools.h"
#include "kvcache/state_slots.h"
#include "kvcache/state_snapshots.h"
#include "scheduler/scheduling_policy.h"
#include "scheduler/sequence.h"
#include "scheduler/speculative_config.h"
#include "scheduler/step_plan.h"

namespace ps {

struct SchedulerConfig {
  int32_t num_blocks = 0;
  // > 0: sliding-window layers keep their K/V in a pool of this many blocks, given back as the
  // window passes (kvcache/kv_pools.h); sliding_window is its W.
  int32_t num_sliding_blocks = 0;
  int32_t sliding_window = 0;
  // > 0: the model has recurrent layers (Gated DeltaNet); each running sequence holds one of
  // this many state slots (kvcache/state_slots.h), so at most this many run at once. A prefix
  // is reused only up to a boundary whose state was kept: num_state_snapshots snapshots
  // (kvcache/state_snapshots.h) taken every state_snapshot_interval prompt tokens (a multiple
  // of block_size); 0 of either: no prefix reuse.
  int32_t num_state_slots = 0;
  int32_t num_state_snapshots = 0;
  int32_t state_snapshot_interval = 0;
  int32_t block_size = 16;
  int32_t max_num_seqs = 64;
  int32_t max_batched_tokens = 2048;
  bool enable_prefix_caching = true;
  BlockHasher block_hasher = {};  // empty: default_block_hash (tests inject collisions)
  SpeculativeConfig speculative;  // n-gram drafts for sequences that allow_speculation()
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
};

class Scheduler {
 public:
  // Throws std::invalid_argument on a non-positive size or count.
  explicit Scheduler(SchedulerConfig config);

  // -> waiting, at the back of the queue (kPriority: behind every waiting sequence of the same
  // or a lower value). A prompt that needs more blocks than the whole pool is rejected at once
  // (see take_rejected). Throws std::invalid_argument on an empty prompt or an id already in
  // use. `adapter`: the LoRA adapter it runs with (sequence.h). `priority` only orders under
  // kPriority.
  void add(SeqId id, std::vector<int32_t> prompt_ids, SeqAdapter adapter = {},
           int32_t priority = 0);

  // Lets `id` carry n-gram draft tokens (config.speculative) while it decodes, never past
  // `max_total_tokens` tokens (its prompt + max_tokens: drafts beyond its end are waste).
  // Sequences draft only when allowed (the engine leaves out constrained requests). Unknown
  // id: no-op.
  void allow_speculation(SeqId id, int32_t max_total_tokens);

  // Makes `id`'s prompt rows return logits (prompt logprobs; StepPlan::prompt_rows): it never
  // takes K/V from the prefix cache, so every prompt row is computed. Unknown id: no-op.
  void want_prompt_logits(SeqId id);

  // Builds one step: every running sequence's next token first, then prefill chunks of
  // partially prefilled and waiting sequences, oldest first, within max_batched_tokens and
  // max_num_seqs; then, with the budget and blocks left, draft tokens for decoding sequences
  // that allow speculation (plan.num_draft_tokens). May preempt (plan.preempted) and reject
  // (take_rejected); drafts never cause either.
  StepPlan schedule();

  // After the model ran `plan`: each scheduled sequence's computed count advances by its
  // tokens, full computed blocks go to the prefix cache, and sampled[i] is appended to
  // plan.seq_ids[plan.sample_indices[i]]. Sequences finished since schedule() are skipped.
  // Without drafts, sampled[i] is verified[i] = {sampled[i]}.
  void postprocess(const StepPlan& plan, const std::vector<int32_t>& sampled);
  // The same for a step that may have drafted: verified[i] holds the tokens sequence
  // sample_indices[i] keeps, 1 to 1 + plan.drafts_of(i) of them: the accepted draft tokens
  // (equal to the draft), then the token sampled after them. The slots of rejected draft
  // tokens are rolled back (BlockManager::truncate), so only committed tokens are published.
  void postprocess_verified(const StepPlan& plan,
                            const std::vector<std::vector<int32_t>>& verified);

  // waiting|running -> finished: releases the blocks (published ones stay cached) and forgets
  // the sequence. Unknown id: no-op. Used for stop, length and abort alike.
  void finish(SeqId id);

  // Sequences removed because they need more blocks than the pool has, even alone.
  std::vector<SeqId> take_rejected();

  bool has_unfinished() const { return !running_.empty() || !waiting_.empty(); }
  int32_t num_running() const { return static_cast<int32_t>(running_.size()); }
  int32_t num_waiting() const { return static_cast<int32_t>(waiting_.size()); }
  const Sequence* find(SeqId id) const;
  // The full-attention pool (every layer's, for a model without sliding-window layers).
  const BlockManager& block_manager() const { return kv_.full(); }
  const KvPools& kv_pools() const { return kv_; }
  const StateSlotPool& state_slots() const { return states_; }
  const StateSnapshotStore& state_snapshots() const { return snapshots_; }
  // The full-attention pool's KV-cache events (kvcache/block_events.h): off until turned on.
  // A router placing requests by prefix needs the blocks that every layer keeps.
  void record_block_events(bool on) { kv_.full().set_record_events(on); }
  std::vector<BlockEvent> take_block_events() { return kv_.full().take_events(); }
  uint64_t num_preemptions() const { return num_preemptions_; }
  const SchedulerConfig& config() const { return config_; }

  // Ids in queue order (oldest running first; front of waiting first).
  std::vector<SeqId> running_ids() const;
  std::vector<SeqId> waiting_ids() const;

  // Block-manager integrity plus the sequences' own: states match queues, running sequences
  // hold blocks for their computed tokens, waiting ones hold none. Throws std::logic_error.
  void check_integrity() const;

 private:
  using Queue = std::list<Sequence*>;

  // One step under construction.
  struct Step {
    std::vector<Sequence*> scheduled;
    int32_t budget = 0;
    std::vector<SeqId> preempted;
    // Recurrent-state restores of this step's prefix hits, and the snapshots it writes.
    struct StateCopy {
      const Sequence* seq = nullptr;
      int32_t num_tokens = 0;
      int32_t snapshot = 0;
    };
    std::vector<StateCopy> restores, snapshots;
  };
  // A snapshot a plan writes, committed or abandoned once its step is postprocessed.
  struct PendingSnapshot {
    SeqId seq = 0;
    int32_t num_tokens = 0;
    int32_t snapshot = 0;
  };

  void schedule_decodes(Step& step);
  void schedule_running_prefills(Step& step);
  void admit_waiting(Step& step);
  void schedule_drafts(Step& step);
  // scheduler_snapshots.cpp: a recurrent model's prefix hit, cut to the longest boundary whose
  // state snapshot is held (*snapshot: its id, or -1 with no hit at all); the snapshots the
  // step's prefill chunks cross; their commit after the step.
  KvMatch match_with_state(const Sequence& seq, uint64_t root, int32_t* snapshot);
  void plan_snapshots(Step& step);
  void settle_snapshots();
  // Gets blocks for `seq`'s first `num_slots` tokens, preempting running sequences (victim())
  // while the pool is short. False when `seq` itself had to be preempted.
  bool reserve_or_preempt(Step& step, Sequence* seq, int32_t num_slots);
  // The running sequence preempted first (the policy's; see SchedulingPolicy).
  Sequence* victim() const;
  void preempt(Step& step, Sequence* victim);
  // kPriority: preempts victim() when its priority is strictly lower than `seq`'s (a higher
  // value). False (nothing done) otherwise, and always under kFcfs.
  bool preempt_lower(Step& step, const Sequence& seq);
  // Puts a waiting sequence in its place: kFcfs at the front (preempted) or back (new);
  // kPriority by (priority, arrival).
  void enqueue_waiting(Sequence* seq, bool preempted);
  // kPriority: whether `a` goes before `b`.
  static bool ranks_before(const Sequence& a, const Sequence& b);
  void add_to_step(Step& step, Sequence* seq, int32_t num_tokens);
  bool fits_pool(const Sequence& seq) const;
  void reject(Sequence* seq);
  StepPlan build_plan(const Step& step) const;
  Sequence* lookup(SeqId id) const;

  SchedulerConfig config_;
  KvPools kv_;
  StateSlotPool states_;
  StateSnapshotStore snapshots_;
  std::vector<PendingSnapshot> pending_snapshots_;
  std::unordered_map<SeqId, std::unique_ptr<Sequence>> seqs_;
  Queue running_;  // admission order: newest at the back, preempted first
  Queue waiting_;  // kFcfs: FIFO, preempted sequences at the front; kPriority: sorted
  uint64_t next_arrival_ = 0;
  std::vector<SeqId> rejected_;
  uint64_t num_preemptions_ = 0;
};

}  // namespace ps
