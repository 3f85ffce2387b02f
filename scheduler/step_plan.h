#pragma once
// The contract between scheduler/ and model/: one packed, batched forward step
// (docs/architecture.md §3). Data only (vectors and counts, no scheduler logic, nothing included
// but the standard library): it is the one header of scheduler/ that model/ reads, and the only
// thing model/ links of it (target pagedserve_step_plan), so the model compiles and is tested
// without the scheduler.
#include <cstdint>
#include <vector>

namespace ps {

using SeqId = int64_t;

struct StepPlan {
  // S scheduled sequences, in batch order.
  std::vector<SeqId> seq_ids;
  // T packed tokens: the new tokens of every scheduled sequence, sequence after sequence.
  std::vector<int32_t> token_ids;
  std::vector<int32_t> positions;
  // Where each new token's K/V is written: block_id * block_size + offset in block.
  std::vector<int32_t> slot_mapping;
  // S + 1 prefix sums: sequence s owns packed rows [query_start[s], query_start[s+1]).
  std::vector<int32_t> query_start;
  // S: tokens in the KV cache for sequence s once this step's tokens are written.
  std::vector<int32_t> context_len;
  // S x max_blocks_per_seq, row-major; entries past a sequence's blocks are -1.
  std::vector<int32_t> block_tables;
  int32_t max_blocks_per_seq = 0;
  // A model with a sliding-window pool (kvcache/kv_pools.h): its sliding layers' slots and block
  // tables, shaped as the two above. Entries of blocks every row's window has passed are -1.
  // Empty: every layer uses slot_mapping and block_tables.
  std::vector<int32_t> sliding_slot_mapping;
  std::vector<int32_t> sliding_block_tables;
  // A model with recurrent layers (kvcache/state_slots.h): S, the state slot each sequence
  // reads and writes. A sequence whose first new token is at position 0 starts from a zero
  // state. Empty: no recurrent layers.
  std::vector<int32_t> state_slots;
  // Recurrent-state snapshots at block boundaries (kvcache/state_snapshots.h). Before the step,
  // each restore loads snapshot `snapshot` into sequence seq_index's state slot (a prefix hit of
  // num_tokens tokens: its first new token is at that position). During the step, each snapshot
  // entry copies sequence seq_index's state after its first num_tokens tokens into snapshot
  // `snapshot`. Snapshot ids count from 0; the executor keeps them past its running slots.
  struct StateCopy {
    int32_t seq_index = 0;
    int32_t num_tokens = 0;
    int32_t snapshot = 0;
  };
  std::vector<StateCopy> state_restores;
  std::vector<StateCopy> state_snapshots;
  // Indices s in [0, S) whose last new token produces logits this step (prompt complete or
  // decoding). Logits come back in this order.
  std::vector<int32_t> sample_indices;
  // Speculative decoding: per entry of sample_indices, how many draft tokens end that
  // sequence's new tokens. Its logits come back for its last 1 + n rows (the last committed
  // token's row, then each draft's), so there are sum(1 + n) logit rows in all. Empty: no
  // drafts anywhere (one row per sample index, as without speculation).
  std::vector<int32_t> num_draft_tokens;
  // Prompt logprobs (a request's prompt_logprobs or echo): packed rows [begin, end) of sequence
  // seq_index whose logits also come back, after every sampling row, in this order. Row r
  // scores the prompt token at position positions[r] + 1; a sampling row is never listed here.
  struct PromptRows {
    int32_t seq_index = 0;
    int32_t begin = 0;
    int32_t end = 0;
  };
  std::vector<PromptRows> prompt_rows;
  // S: the LoRA adapter slot each sequence runs with (-1: the base model alone), or empty when
  // every sequence is base. Slots index the runner's resident adapters (cpu/lora_bank.h).
  std::vector<int32_t> lora_slot;

  // Accounting, for metrics and tests.
  int32_t num_prefill_tokens = 0;
  int32_t num_decode_tokens = 0;
  std::vector<SeqId> preempted;  // sequences preempted while building this plan

  int32_t num_seqs() const { return static_cast<int32_t>(seq_ids.size()); }
  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  bool empty() const { return seq_ids.empty(); }
  int32_t drafts_of(size_t sample) const {
    return num_draft_tokens.empty() ? 0 : num_draft_tokens[sample];
  }
  // The packed rows whose logits the model returns, in order: the sampling rows (see
  // num_draft_tokens), then the prompt rows.
  std::vector<int32_t> logit_rows() const {
    std::vector<int32_t> rows;
    rows.reserve(sample_indices.size());
    for (size_t i = 0; i < sample_indices.size(); ++i) {
      const int32_t end = query_start[sample_indices[i] + 1];
      for (int32_t r = end - 1 - drafts_of(i); r < end; ++r) rows.push_back(r);
    }
    for (const PromptRows& p : prompt_rows) {
      for (int32_t r = p.begin; r < p.end; ++r) rows.push_back(r);
    }
    return rows;
  }
};

}  // namespace ps
