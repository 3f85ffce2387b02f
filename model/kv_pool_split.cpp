#include "model/kv_pool_split.h"

#include <algorithm>

namespace ps {

KvPoolSizes split_kv_pools(const ModelConfig& c, int32_t unified_blocks, int32_t block_size,
                           int32_t max_num_seqs, int32_t max_batched_tokens, bool split) {
  int64_t sliding_layers = 0;
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) sliding_layers += c.layer_is_sliding(l);
  const int64_t full_layers = c.num_hidden_layers - sliding_layers;
  if (!split || sliding_layers == 0 || full_layers == 0 || c.sliding_window <= 0 ||
      block_size <= 0) {
    return {unified_blocks, 0};
  }
  const auto blocks_for = [&](int64_t tokens) { return (tokens + block_size - 1) / block_size; };
  // A decoding sequence spans its window's W positions (at most blocks_for(W) + 1 blocks when
  // the window straddles a boundary) and the block its next token goes to.
  const int64_t per_seq = blocks_for(c.sliding_window) + 2;
  const int64_t want = int64_t{max_num_seqs} * per_seq + blocks_for(max_batched_tokens) + 1;
  const int64_t sliding = std::min<int64_t>(unified_blocks, want);
  const int64_t layer_blocks = int64_t{unified_blocks} * c.num_hidden_layers;
  const int64_t full = (layer_blocks - sliding * sliding_layers) / full_layers;
  return {static_cast<int32_t>(std::min<int64_t>(full, 1 << 30)), static_cast<int32_t>(sliding)};
}

}  // namespace ps
