#include "reference/naive_generate.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "model/model_weights.h"
#include "reference/naive_forward.h"

namespace ps {
namespace {

int32_t argmax(const float* row, int64_t n) {
  return static_cast<int32_t>(std::max_element(row, row + n) - row);
}

// Inverse-CDF sampling in double; `u` in [0, 1).
int32_t sample(const float* row, int64_t n, float temperature, double u) {
  const float top = *std::max_element(row, row + n);
  std::vector<double> p(static_cast<size_t>(n));
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    p[static_cast<size_t>(i)] = std::exp((static_cast<double>(row[i]) - top) / temperature);
    total += p[static_cast<size_t>(i)];
  }
  double target = u * total;
  for (int64_t i = 0; i < n; ++i) {
    target -= p[static_cast<size_t>(i)];
    if (target < 0.0) return static_cast<int32_t>(i);
  }
  return argmax(row, n);  // rounding left a sliver past the last bucket
}

}  // namespace

std::vector<int32_t> naive_generate(const ModelWeights& weights, std::vector<int32_t> prompt,
                                    int max_new_tokens, float temperature, uint64_t seed,
                                    const std::vector<int32_t>& eos_ids) {
  if (prompt.empty()) throw std::invalid_argument("naive_generate: the prompt is empty");
  if (!(temperature >= 0.0f)) {
    throw std::invalid_argument("naive_generate: temperature must be >= 0");
  }
  const int64_t vocab = weights.config.vocab_size;
  std::mt19937_64 rng(seed);
  std::vector<int32_t> out;
  std::vector<int32_t> seq = std::move(prompt);
  for (int step = 0; step < max_new_tokens; ++step) {
    const std::vector<float> logits = naive_logits(weights, seq);
    const float* last = logits.data() + (static_cast<int64_t>(seq.size()) - 1) * vocab;
    // 53 random bits -> a double in [0, 1), the same on every platform (unlike the std
    // distributions, whose algorithms are implementation-defined).
    const double u = static_cast<double>(rng() >> 11) * 0x1p-53;
    const int32_t next =
        temperature == 0.0f ? argmax(last, vocab) : sample(last, vocab, temperature, u);
    out.push_back(next);
    seq.push_back(next);
    if (std::find(eos_ids.begin(), eos_ids.end(), next) != eos_ids.end()) break;
  }
  return out;
}

}  // namespace ps
