#pragma once
// Validation of a StepPlan before the forward trusts it with raw pointers. O(tokens + blocks
// read), a few microseconds per step; a scheduler bug surfaces as a message, not as wrong K/V.
#include <cstdint>

#include "model/model_config.h"
#include "scheduler/step_plan.h"

namespace ps {

// Throws std::invalid_argument naming the first inconsistency: array sizes, query_start not a
// prefix sum ending at T, positions that are not context_len - query_len + i, token ids outside
// the vocabulary, positions past max_position_embeddings, block table entries outside
// [0, num_blocks) where they cover context, slots that disagree with the block table, and
// sample indices out of range or of a sequence without new tokens. num_sliding_blocks > 0: the
// plan must carry the sliding pool's tables and slots (kvcache/kv_pools.h), checked the same
// way over the blocks each sequence's rows can attend to; 0: it must carry none.
void check_step_plan(const StepPlan& plan, const ModelConfig& config, int32_t num_blocks,
                     int32_t block_size, int32_t num_sliding_blocks = 0);

// A model with recurrent layers (num_state_slots > 0): one distinct slot in [0, num_state_slots)
// per sequence, each state restore at its sequence's first new position and each snapshot
// after one of its new rows, within [0, num_snapshots). Others: no state slots or copies.
void check_state_copies(const StepPlan& plan, int32_t num_state_slots, int32_t num_snapshots);

}  // namespace ps
