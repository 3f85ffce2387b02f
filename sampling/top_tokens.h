#pragma once
#include <cstdint>
#include <vector>

namespace ps {

struct ScoredToken {
  float logit;
  int32_t id;
};

// The order every sampling decision uses: higher logit first, lower id first on ties. One
// total order makes greedy, top-k, top-p and the inverse-CDF draw deterministic.
inline bool ranks_before(const ScoredToken& a, const ScoredToken& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// The k best tokens of a row in ranks_before order, written to `out` (cleared first).
// Small k uses a bounded heap (one pass, no vocab-sized buffer); large k uses nth_element,
// so a full sort of a 150k vocabulary never happens here.
void select_top_tokens(const float* logits, int32_t vocab, int32_t k,
                       std::vector<ScoredToken>& out);

}  // namespace ps
