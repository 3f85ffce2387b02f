#pragma once
// How a KV-cache budget is split between the full-attention pool and the sliding-window pool
// (kvcache/kv_pools.h) of a model that mixes both kinds of layer. Pure: tested with made-up
// shapes.
#include <cstdint>

#include "model/model_config.h"

namespace ps {

struct KvPoolSizes {
  int32_t num_blocks = 0;          // full-attention pool (every layer's when not split)
  int32_t num_sliding_blocks = 0;  // 0: no sliding pool
};

// `unified_blocks`: the blocks one pool of every layer would get from the budget. The sliding
// pool gets what max_num_seqs decoding sequences hold of their windows, plus one step's prefill
// chunk, and never more than unified_blocks; the full pool gets the rest of the same bytes,
// so it holds at least unified_blocks: no sequence is shorter than it would be without a split.
// A model whose layers are all one kind, or `split` false, gets one pool of unified_blocks.
KvPoolSizes split_kv_pools(const ModelConfig& c, int32_t unified_blocks, int32_t block_size,
                           int32_t max_num_seqs, int32_t max_batched_tokens, bool split = true);

}  // namespace ps
