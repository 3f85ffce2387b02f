#include "sampling/top_tokens.h"

#include <algorithm>

namespace ps {
namespace {

// Above this k, a heap's log k per insertion loses to one nth_element over the row.
constexpr int32_t kHeapMaxK = 1024;

void select_with_heap(const float* logits, int32_t vocab, int32_t k,
                      std::vector<ScoredToken>& out) {
  // std heap with ranks_before keeps the worst kept token at front().
  for (int32_t i = 0; i < vocab; ++i) {
    if (static_cast<int32_t>(out.size()) < k) {
      out.push_back({logits[i], i});
      std::push_heap(out.begin(), out.end(), ranks_before);
    } else if (logits[i] > out.front().logit) {
      // Ids rise with i, so an equal logit never outranks a kept token: '>' is enough.
      std::pop_heap(out.begin(), out.end(), ranks_before);
      out.back() = {logits[i], i};
      std::push_heap(out.begin(), out.end(), ranks_before);
    }
  }
  std::sort_heap(out.begin(), out.end(), ranks_before);
}

}  // namespace

void select_top_tokens(const float* logits, int32_t vocab, int32_t k,
                       std::vector<ScoredToken>& out) {
  out.clear();
  k = std::clamp(k, 0, vocab);
  if (k == 0) return;
  if (k <= kHeapMaxK) {
    out.reserve(k);
    select_with_heap(logits, vocab, k, out);
    return;
  }
  out.resize(vocab);
  for (int32_t i = 0; i < vocab; ++i) out[i] = {logits[i], i};
  if (k < vocab) {
    std::nth_element(out.begin(), out.begin() + k, out.end(), ranks_before);
    out.resize(k);
  }
  std::sort(out.begin(), out.end(), ranks_before);
}

}  // namespace ps
