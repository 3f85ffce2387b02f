#pragma once
// Token generation on top of the naive forward: the whole sequence is recomputed for every new
// token. A stand-in for `pagedserve generate` until the engine runs, and a test oracle after.
#include <cstdint>
#include <vector>

namespace ps {

struct ModelWeights;

// Returns the new tokens only (not the prompt). Stops after max_new_tokens or right after a
// token in eos_ids, which is included as the last element. temperature 0 is greedy (ties go to
// the lowest id); otherwise samples softmax(logits / temperature) with a generator seeded by
// `seed`, so the same call gives the same tokens. Throws std::invalid_argument on an empty
// prompt or a negative temperature.
std::vector<int32_t> naive_generate(const ModelWeights& weights, std::vector<int32_t> prompt,
                                    int max_new_tokens, float temperature, uint64_t seed,
                                    const std::vector<int32_t>& eos_ids);

}  // namespace ps
