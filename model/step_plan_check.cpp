#include "model/step_plan_check.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ps {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("StepPlan: " + what);
}

std::string at_seq(int32_t s) {
  return " (sequence index " + std::to_string(s) + ")";
}

}  // namespace

void check_step_plan(const StepPlan& p, const ModelConfig& c, int32_t num_blocks,
                     int32_t block_size, int32_t num_sliding_blocks) {
  const int32_t S = p.num_seqs();
  const int32_t T = p.num_tokens();
  if (p.positions.size() != size_t(T) || p.slot_mapping.size() != size_t(T)) {
    fail("token_ids, positions and slot_mapping must have the same length");
  }
  if (p.query_start.size() != size_t(S) + 1 || p.context_len.size() != size_t(S)) {
    fail("query_start needs S + 1 entries and context_len S");
  }
  if (p.max_blocks_per_seq < 0 ||
      p.block_tables.size() != size_t(S) * size_t(p.max_blocks_per_seq)) {
    fail("block_tables must be S x max_blocks_per_seq");
  }
  if (!p.state_slots.empty() && p.state_slots.size() != size_t(S)) {
    fail("state_slots needs S entries (or none)");
  }
  if (!p.lora_slot.empty() && p.lora_slot.size() != size_t(S)) {
    fail("lora_slot needs S entries (or none)");
  }
  if (p.query_start[0] != 0 || p.query_start[S] != T) {
    fail("query_start must start at 0 and end at the token count");
  }
  const bool split = num_sliding_blocks > 0;
  if (split && (p.sliding_slot_mapping.size() != size_t(T) ||
                p.sliding_block_tables.size() != p.block_tables.size())) {
    fail("a sliding-window pool needs sliding_slot_mapping and sliding_block_tables");
  }
  if (!split && (!p.sliding_slot_mapping.empty() || !p.sliding_block_tables.empty())) {
    fail("sliding-window tables given to an executor without a sliding pool");
  }
  for (int32_t s = 0; s < S; ++s) {
    const int32_t q0 = p.query_start[s], qlen = p.query_start[s + 1] - q0;
    const int32_t ctx = p.context_len[s];
    if (qlen < 0) fail("query_start decreases" + at_seq(s));
    if (ctx < qlen) fail("context_len is shorter than the new tokens" + at_seq(s));
    if (ctx > c.max_context_len())
      fail("context_len exceeds the model's context (max_position_embeddings, rope-scaled)" +
           at_seq(s));
    const int32_t blocks = (ctx + block_size - 1) / block_size;
    if (blocks > p.max_blocks_per_seq)
      fail("context_len needs more blocks than the table has" + at_seq(s));
    const int32_t* table = p.block_tables.data() + int64_t{s} * p.max_blocks_per_seq;
    for (int32_t b = 0; b < blocks; ++b) {
      if (table[b] < 0 || table[b] >= num_blocks) fail("block id out of range" + at_seq(s));
    }
    if (split) {
      // Only the blocks some row's window reaches must be real (paged_attention.h).
      const int32_t reach = std::max(0, ctx - qlen - c.sliding_window + 1);
      const int32_t* own = p.sliding_block_tables.data() + int64_t{s} * p.max_blocks_per_seq;
      for (int32_t b = reach / block_size; b < blocks; ++b) {
        if (own[b] < 0 || own[b] >= num_sliding_blocks) {
          fail("sliding block id out of range" + at_seq(s));
        }
      }
      for (int32_t i = 0; i < qlen; ++i) {
        const int32_t pos = ctx - qlen + i;
        const int64_t slot = int64_t{own[pos / block_size]} * block_size + pos % block_size;
        if (p.sliding_slot_mapping[q0 + i] != slot) {
          fail("sliding slot of token " + std::to_string(q0 + i) +
               " disagrees with the block table" + at_seq(s));
        }
      }
    }
    for (int32_t i = 0; i < qlen; ++i) {
      const int32_t t = q0 + i;
      const int32_t pos = ctx - qlen + i;
      if (p.positions[t] != pos) {
        fail("position of token " + std::to_string(t) + " is not context_len - query_len + i" +
             at_seq(s));
      }
      const int64_t slot = int64_t{table[pos / block_size]} * block_size + pos % block_size;
      if (p.slot_mapping[t] != slot) {
        fail("slot of token " + std::to_string(t) + " disagrees with the block table" + at_seq(s));
      }
      if (p.token_ids[t] < 0 || p.token_ids[t] >= c.vocab_size) {
        fail("token id " + std::to_string(p.token_ids[t]) + " is outside the vocabulary" +
             at_seq(s));
      }
    }
  }
  for (int32_t s : p.sample_indices) {
    if (s < 0 || s >= S) fail("sample index " + std::to_string(s) + " out of range");
    if (p.query_start[s + 1] == p.query_start[s])
      fail("sampled sequence has no new token" + at_seq(s));
  }
  if (!p.num_draft_tokens.empty() && p.num_draft_tokens.size() != p.sample_indices.size()) {
    fail("num_draft_tokens needs one entry per sample index (or none)");
  }
  for (size_t i = 0; i < p.num_draft_tokens.size(); ++i) {
    const int32_t s = p.sample_indices[i];
    const int32_t d = p.num_draft_tokens[i];
    if (d < 0 || d >= p.query_start[s + 1] - p.query_start[s]) {
      fail("draft count " + std::to_string(d) + " not below the new tokens" + at_seq(s));
    }
  }
}

// A hybrid model's plan names one distinct state slot per sequence, and state copies within
// the snapshots and the sequences' rows; others name none.
void check_state_copies(const StepPlan& plan, int32_t num_slots, int32_t num_snapshots) {
  if (num_slots == 0) {
    if (!plan.state_slots.empty() || !plan.state_restores.empty() ||
        !plan.state_snapshots.empty()) {
      throw std::invalid_argument("StepPlan: state slots given to a model without linear layers");
    }
    return;
  }
  auto check_copy = [&](const StepPlan::StateCopy& c, bool restore) {
    bool ok = c.seq_index >= 0 && c.seq_index < plan.num_seqs() && c.snapshot >= 0 &&
              c.snapshot < num_snapshots;
    if (ok) {
      const int32_t begin = plan.query_start[size_t(c.seq_index)];
      const int32_t end = plan.query_start[size_t(c.seq_index) + 1];
      const int32_t first = begin < end ? plan.positions[size_t(begin)] : -1;
      // A restore is the state before the first new row; a snapshot one after one of them.
      ok = restore ? first == c.num_tokens
                   : first >= 0 && c.num_tokens > first && c.num_tokens <= first + (end - begin);
    }
    if (!ok) {
      throw std::invalid_argument(
          "StepPlan: a state " + std::string(restore ? "restore" : "snapshot") +
          " names no row of its sequence or snapshot " + std::to_string(c.snapshot) + " of " +
          std::to_string(num_snapshots));
    }
  };
  for (const auto& c : plan.state_restores) check_copy(c, true);
  for (const auto& c : plan.state_snapshots) check_copy(c, false);
  if (plan.state_slots.size() != size_t(plan.num_seqs())) {
    throw std::invalid_argument(
        "StepPlan: a model with linear-attention layers needs one state "
        "slot per sequence");
  }
  std::vector<bool> seen(size_t(num_slots), false);
  for (int32_t slot : plan.state_slots) {
    if (slot < 0 || slot >= num_slots || seen[size_t(slot)]) {
      throw std::invalid_argument("StepPlan: state slot " + std::to_string(slot) +
                                  " is out of range or named twice (" + std::to_string(num_slots) +
                                  " slots)");
    }
    seen[size_t(slot)] = true;
  }
}

}  // namespace ps
