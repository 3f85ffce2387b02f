#include "sampling/bucketed_draw.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "sampling/top_tokens.h"

namespace ps {
namespace {

constexpr int kPerUnit = 16;                    // buckets per unit of z (e^(1/16) = 1.065)
constexpr int kSpan = 32;                       // z below -32: weight < 1.3e-14 of the best
constexpr int kBuckets = kSpan * kPerUnit + 1;  // the last bucket takes all the rest
constexpr int kAllBuckets = kBuckets;           // a cut that keeps every bucket

// A prefix of the sorted row: every bucket before `bucket`, then the first `n` tokens of
// `bucket` in sorted order.
struct Cut {
  int bucket = kAllBuckets;
  size_t n = 0;
  bool operator<(const Cut& o) const {
    return bucket < o.bucket || (bucket == o.bucket && n < o.n);
  }
};

class BucketedRow {
 public:
  BucketedRow(const float* logits, int32_t vocab, float max_logit, float temperature)
      : logits_(logits), vocab_(vocab), max_(max_logit), inv_t_(1.0f / temperature) {
    mass_.fill(0.0);
    count_.fill(0);
    for (int32_t i = 0; i < vocab; ++i) {
      if (logits[i] == -kInf) continue;
      const float z = z_of(i);
      const int b = bucket_of(z);
      mass_[b] += std::exp(z);
      ++count_[b];
      end_ = std::max(end_, b + 1);
    }
    for (int b = 0; b < end_; ++b) total_ += mass_[b];
  }

  double total() const { return total_; }
  int end() const { return end_; }  // one past the last non-empty bucket
  double mass(int b) const { return mass_[b]; }
  bool empty(int b) const { return count_[b] == 0; }

  // The tokens of bucket b in (logit desc, id asc) order, and their weights; cached, since
  // the boundaries and the draw often land in the same bucket.
  const std::vector<ScoredToken>& sorted(int b) {
    if (b == cached_) return tokens_;
    tokens_.clear();
    for (int32_t i = 0; i < vocab_; ++i) {
      if (logits_[i] != -kInf && bucket_of(z_of(i)) == b) tokens_.push_back({logits_[i], i});
    }
    std::sort(tokens_.begin(), tokens_.end(), ranks_before);
    weights_.resize(tokens_.size());
    for (size_t j = 0; j < tokens_.size(); ++j) weights_[j] = std::exp(z_of(tokens_[j].id));
    cached_ = b;
    return tokens_;
  }
  // Weights of the last sorted() bucket, same order.
  const std::vector<float>& weights() const { return weights_; }

  // The lower edge of bucket b in weight: every token in it weighs at least this.
  static double min_weight(int b) {
    return b == kBuckets - 1 ? 0.0 : std::exp(-static_cast<double>(b + 1) / kPerUnit);
  }

 private:
  static constexpr float kInf = std::numeric_limits<float>::infinity();

  // One expression for z everywhere, so a token's bucket and weight never disagree between
  // passes. Monotone in the logit, which keeps buckets contiguous in the sorted order.
  float z_of(int32_t i) const { return (logits_[i] - max_) * inv_t_; }
  static int bucket_of(float z) {
    const float s = -z * kPerUnit;
    return s >= static_cast<float>(kBuckets - 1) ? kBuckets - 1 : static_cast<int>(s);
  }

  const float* logits_;
  int32_t vocab_;
  float max_;
  float inv_t_;
  std::array<double, kBuckets> mass_{};
  std::array<int32_t, kBuckets> count_{};
  double total_ = 0;
  int end_ = 0;
  int cached_ = -1;
  std::vector<ScoredToken> tokens_;
  std::vector<float> weights_;
};

// Smallest prefix whose mass reaches top_p of the row: a token is kept while the mass
// before it is below the limit.
Cut top_p_cut(BucketedRow& row, float top_p) {
  const double limit = static_cast<double>(top_p) * row.total();
  double cum = 0;
  for (int b = 0; b < row.end(); ++b) {
    if (row.empty(b)) continue;
    if (cum + row.mass(b) < limit) {
      cum += row.mass(b);
      continue;
    }
    const auto& tokens = row.sorted(b);
    const auto& w = row.weights();
    size_t n = 0;
    for (; n < tokens.size() && cum < limit; ++n) cum += w[n];
    return {b, n};  // n >= 1: cum < limit on entering this bucket
  }
  return {};
}

// Tokens with weight (p / p_max) >= min_p.
Cut min_p_cut(BucketedRow& row, float min_p) {
  for (int b = 0; b < row.end(); ++b) {
    if (row.empty(b)) continue;
    if (BucketedRow::min_weight(b) >= static_cast<double>(min_p) * (1 + 1e-6)) continue;
    const auto& tokens = row.sorted(b);
    const auto& w = row.weights();
    for (size_t n = 0; n < tokens.size(); ++n) {
      if (w[n] < min_p) return {b, n};
    }
  }
  return {};
}

}  // namespace

int32_t draw_bucketed(const float* logits, int32_t vocab, float max_logit, const SamplingParams& p,
                      double u) {
  BucketedRow row(logits, vocab, max_logit, p.temperature);
  Cut cut;
  if (p.top_p < 1.0f) cut = std::min(cut, top_p_cut(row, p.top_p));
  if (p.min_p > 0.0f) cut = std::min(cut, min_p_cut(row, p.min_p));

  double norm = 0;
  for (int b = 0; b < std::min(cut.bucket, row.end()); ++b) norm += row.mass(b);
  if (cut.bucket < kBuckets) {
    row.sorted(cut.bucket);
    for (size_t j = 0; j < cut.n; ++j) norm += row.weights()[j];
  }

  const double target = u * norm;
  double cum = 0;
  int32_t last_kept = -1;  // for a target that rounding pushed past the kept mass
  for (int b = 0; b <= std::min(cut.bucket, row.end() - 1); ++b) {
    if (row.empty(b)) continue;
    const bool boundary = b == cut.bucket;
    if (!boundary && target >= cum + row.mass(b)) {
      cum += row.mass(b);
      last_kept = b;
      continue;
    }
    const auto& tokens = row.sorted(b);
    const auto& w = row.weights();
    const size_t n = boundary ? cut.n : tokens.size();
    for (size_t j = 0; j < n; ++j) {
      cum += w[j];
      if (target < cum) return tokens[j].id;
    }
    if (n > 0) return tokens[n - 1].id;
  }
  return last_kept >= 0 ? row.sorted(last_kept).back().id : 0;
}

}  // namespace ps
