// Scheduler::build_plan(): turns the chosen (sequence, token count) pairs into the packed
// model input of scheduler/step_plan.h.
#include <algorithm>

#include "scheduler/scheduler.h"

namespace ps {

StepPlan Scheduler::build_plan(const Step& step) const {
  StepPlan plan;
  const int32_t bs = config_.block_size;
  const auto num_seqs = static_cast<int32_t>(step.scheduled.size());
  int32_t num_tokens = 0;
  int32_t max_blocks = 0;
  for (const Sequence* seq : step.scheduled) {
    num_tokens += seq->scheduled_tokens_;
    max_blocks = std::max(max_blocks, static_cast<int32_t>(seq->block_table().size()));
  }
  plan.max_blocks_per_seq = max_blocks;
  plan.seq_ids.reserve(num_seqs);
  plan.token_ids.reserve(num_tokens);
  plan.positions.reserve(num_tokens);
  plan.slot_mapping.reserve(num_tokens);
  plan.query_start.reserve(num_seqs + 1);
  plan.context_len.reserve(num_seqs);
  plan.block_tables.assign(static_cast<size_t>(num_seqs) * max_blocks, -1);
  const BlockManager* sliding = kv_.sliding();
  if (sliding) {
    plan.sliding_slot_mapping.reserve(num_tokens);
    plan.sliding_block_tables.assign(plan.block_tables.size(), -1);
  }
  plan.query_start.push_back(0);
  bool any_drafts = false;

  for (int32_t s = 0; s < num_seqs; ++s) {
    const Sequence* seq = step.scheduled[s];
    const std::vector<int32_t>& table = seq->block_table();
    const int32_t begin = seq->num_computed_tokens();
    const int32_t end = begin + seq->scheduled_tokens_;
    // Draft tokens (speculative) follow the committed ones; they are not the sequence's yet.
    const int32_t committed = seq->num_tokens();
    const auto drafts = static_cast<int32_t>(seq->draft().size());
    plan.seq_ids.push_back(seq->id());
    if (states_.num_slots() > 0) plan.state_slots.push_back(states_.slot_of(seq->id()));
    for (int32_t pos = begin; pos < end; ++pos) {
      plan.token_ids.push_back(pos < committed ? seq->tokens()[pos]
                                               : seq->draft()[pos - committed]);
      plan.positions.push_back(pos);
      plan.slot_mapping.push_back(table[pos / bs] * bs + pos % bs);
    }
    if (sliding) {
      const std::vector<int32_t>& own = sliding->block_table(seq->id());
      for (int32_t pos = begin; pos < end; ++pos) {
        plan.sliding_slot_mapping.push_back(own[pos / bs] * bs + pos % bs);
      }
      std::copy(own.begin(), own.end(),
                plan.sliding_block_tables.begin() + static_cast<ptrdiff_t>(s) * max_blocks);
    }
    plan.query_start.push_back(static_cast<int32_t>(plan.token_ids.size()));
    plan.context_len.push_back(end);
    std::copy(table.begin(), table.end(),
              plan.block_tables.begin() + static_cast<ptrdiff_t>(s) * max_blocks);
    // The last scheduled token is the sequence's last token (or draft token): its logits, and
    // those of the rows before each draft token, pick the next one.
    if (end == committed + drafts) {
      plan.sample_indices.push_back(s);
      plan.num_draft_tokens.push_back(drafts);
      any_drafts = any_drafts || drafts > 0;
    }
    // Prompt logprobs: row `pos` scores prompt token pos + 1, so the rows up to the one before
    // the last prompt token (that one is the sampling row, scoring the first output token).
    if (seq->prompt_logits()) {
      const int32_t last = std::min(end, seq->num_prompt_tokens() - 1);
      if (begin < last) {
        const int32_t row0 = plan.query_start[s];
        plan.prompt_rows.push_back({s, row0, row0 + (last - begin)});
      }
    }
    if (seq->adapter().slot >= 0 && plan.lora_slot.empty()) plan.lora_slot.assign(num_seqs, -1);
    if (!plan.lora_slot.empty()) plan.lora_slot[s] = seq->adapter().slot;
    if (seq->scheduled_tokens_ == 1 + drafts && end == committed + drafts &&
        seq->num_output_tokens() > 0) {
      plan.num_decode_tokens += seq->scheduled_tokens_;
    } else {
      plan.num_prefill_tokens += seq->scheduled_tokens_;
    }
  }
  // State copies of sequences still in the step (one preempted after admission has none).
  auto copies = [&](const std::vector<Step::StateCopy>& from,
                    std::vector<StepPlan::StateCopy>* to) {
    for (const Step::StateCopy& c : from) {
      const auto at = std::find(step.scheduled.begin(), step.scheduled.end(), c.seq);
      if (at == step.scheduled.end()) continue;
      to->push_back({static_cast<int32_t>(at - step.scheduled.begin()), c.num_tokens, c.snapshot});
    }
  };
  copies(step.restores, &plan.state_restores);
  copies(step.snapshots, &plan.state_snapshots);
  if (!any_drafts) plan.num_draft_tokens.clear();  // without drafts the plan is as before
  plan.preempted = step.preempted;
  return plan;
}

}  // namespace ps
