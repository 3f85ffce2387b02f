#pragma once
// The test oracle: the whole decoder recomputed from scratch over one sequence, no KV cache,
// no packing. Slow and obviously correct; the batched engine is checked against it.
#include <cstdint>
#include <vector>

namespace ps {

struct ModelWeights;

// Logits for every position: [tokens.size(), vocab_size], row-major.
std::vector<float> naive_logits(const ModelWeights& weights, const std::vector<int32_t>& tokens);

}  // namespace ps
