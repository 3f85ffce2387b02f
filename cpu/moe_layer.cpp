#include "cpu/moe_layer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "cpu/runner_ops.h"
#include "kernels/parallel_for.h"
#include "model/moe_weights.h"

namespace ps {
namespace {

constexpr float kGptOssSwigluAlpha = 1.702f;  // fixed in gpt-oss's code, not in its config

Tensor f32(const Tensor& t, const char* what) {
  if (!t.defined()) throw std::invalid_argument(std::string("MoeLayer: missing ") + what);
  return t.to(DType::f32);
}

Projection projection(const Tensor& w, LinearTuner& tuner) {
  return Projection(w, tuner.plan_for(w.data_ptr<float>(), w.size(0), w.size(1)));
}

// [gate; up] of each listed expert stacked so that a row of the product is
// [gate_1 .. gate_n | up_1 .. up_n], the layout silu_mul_rows reads, and the matching
// [down_1 | .. | down_n]: one MLP whose output is the sum of the experts' outputs.
std::pair<Tensor, Tensor> fused_mlp(const std::vector<ExpertWeights>& experts) {
  std::vector<Tensor> gates, ups, downs;
  for (const ExpertWeights& e : experts) {
    gates.push_back(f32(e.gate_proj, "expert gate_proj"));
    ups.push_back(f32(e.up_proj, "expert up_proj"));
    downs.push_back(f32(e.down_proj, "expert down_proj"));
  }
  Tensor gate_up = cat_rows({cat_rows(gates), cat_rows(ups)});
  Tensor down = cat_cols(downs);
  return {gate_up, down};
}

template <typename T>
T* grow(std::vector<T>& v, int64_t n) {
  if (int64_t(v.size()) < n) v.resize(size_t(n));
  return v.data();
}

}  // namespace

void route_row(const float* logits, const MoeConfig& moe, int32_t* experts, float* weights) {
  const int32_t E = moe.num_experts, k = moe.num_experts_per_tok;
  // fp32 softmax as torch computes it: exp(x - max) / sum.
  float mx = logits[0];
  for (int32_t e = 1; e < E; ++e) mx = std::max(mx, logits[e]);
  float probs[512];
  float sum = 0.0f;
  for (int32_t e = 0; e < E; ++e) {
    probs[e] = std::exp(logits[e] - mx);
    sum += probs[e];
  }
  for (int32_t e = 0; e < E; ++e) probs[e] /= sum;
  // k passes of "largest remaining" (k is small); ties go to the lower id.
  bool taken[512] = {};
  for (int32_t j = 0; j < k; ++j) {
    int32_t best = -1;
    for (int32_t e = 0; e < E; ++e) {
      if (!taken[e] && (best < 0 || probs[e] > probs[best])) best = e;
    }
    taken[best] = true;
    experts[j] = best;
  }
  std::sort(experts, experts + k);
  float kept = 0.0f;
  for (int32_t j = 0; j < k; ++j) {
    weights[j] = probs[experts[j]];
    kept += weights[j];
  }
  const bool renormalise = moe.norm_topk_prob && !(moe.norm_topk_only_above_one && k == 1);
  if (renormalise) {
    const float denominator = kept + moe.norm_topk_epsilon;
    for (int32_t j = 0; j < k; ++j) weights[j] /= denominator;
  }
}

MoeLayer::MoeLayer(const MoeLayerWeights& w, const ModelConfig& c, LinearTuner& tuner)
    : moe_(c.moe), hidden_(c.hidden_size) {
  if (moe_.num_experts > 512) {
    throw std::invalid_argument("MoeLayer: at most 512 experts are supported, the config has " +
                                std::to_string(moe_.num_experts));
  }
  const size_t listed = moe_.gpt_oss_experts ? 0 : size_t(moe_.num_experts);
  const int64_t shared_listed =
      moe_.shared_expert_intermediate_size > 0 ? 1 : moe_.num_shared_experts;
  if (!w.defined() || w.experts.size() != listed || int64_t(w.shared.size()) != shared_listed ||
      w.shared_expert_gate.defined() != (moe_.shared_expert_intermediate_size > 0)) {
    throw std::invalid_argument("MoeLayer: the layer's experts do not match the config");
  }
  router_ = projection(f32(w.router, "router"), tuner);
  const int64_t I = moe_.moe_intermediate_size;
  if (moe_.gpt_oss_experts) load_gpt_oss_experts(w);
  for (const ExpertWeights& e : w.experts) {
    auto [gate_up, down] = fused_mlp({e});
    gate_up_.push_back(projection(gate_up, tuner));
    down_.push_back(projection(down, tuner));
    if (!gate_up_.back().shape_is(2 * I, hidden_) || !down_.back().shape_is(hidden_, I)) {
      throw std::invalid_argument("MoeLayer: expert weight shapes do not match the config");
    }
  }
  if (!w.shared.empty()) {
    shared_width_ = moe_.shared_expert_intermediate_size > 0
                        ? int64_t{moe_.shared_expert_intermediate_size}
                        : int64_t{c.intermediate_size} * int64_t(w.shared.size());
    auto [gate_up, down] = fused_mlp(w.shared);
    shared_gate_up_ = projection(gate_up, tuner);
    shared_down_ = projection(down, tuner);
    if (!shared_gate_up_.shape_is(2 * shared_width_, hidden_)) {
      throw std::invalid_argument("MoeLayer: shared expert shapes do not match the config");
    }
  }
  if (w.shared_expert_gate.defined()) {
    const Tensor g = f32(w.shared_expert_gate, "shared_expert_gate");
    if (g.numel() != hidden_) {
      throw std::invalid_argument("MoeLayer: shared_expert_gate shape does not match the config");
    }
    shared_gate_.assign(g.data_ptr<float>(), g.data_ptr<float>() + hidden_);
  }
  if (!router_.shape_is(moe_.num_experts, hidden_)) {
    throw std::invalid_argument("MoeLayer: router shape does not match the config");
  }
}

int64_t MoeLayer::bytes_held() const {
  int64_t total = router_.bytes() + shared_gate_up_.bytes() + shared_down_.bytes() +
                  int64_t(shared_gate_.size() * sizeof(float));
  for (size_t e = 0; e < gate_up_.size(); ++e) total += gate_up_[e].bytes() + down_[e].bytes();
  return total;
}

int64_t MoeLayer::bytes_read_per_token() const {
  int64_t experts = 0;
  for (size_t e = 0; e < gate_up_.size(); ++e) {
    experts += gate_up_[e].bytes_read(1) + down_[e].bytes_read(1);
  }
  const int64_t per_expert = gate_up_.empty() ? 0 : experts / int64_t(gate_up_.size());
  return router_.bytes_read(1) + moe_.num_experts_per_tok * per_expert +
         shared_gate_up_.bytes_read(1) + shared_down_.bytes_read(1) +
         int64_t(shared_gate_.size() * sizeof(float));
}

// Qwen3-Next's gate multiplies the shared expert's output by sigmoid(x . g) per row; the down
// projection is linear, so scaling its input rows instead is the same product.
void MoeLayer::scale_by_shared_gate(const float* x, int64_t rows, float* act) const {
  const int64_t H = hidden_, W = shared_width_;
  parallel_for(0, rows, 8, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      double dot = 0.0;
      for (int64_t i = 0; i < H; ++i) dot += double(x[r * H + i]) * shared_gate_[size_t(i)];
      const float gate = sigmoid(float(dot));
      for (int64_t i = 0; i < W; ++i) act[r * W + i] *= gate;
    }
  });
}

void MoeLayer::load_gpt_oss_experts(const MoeLayerWeights& w) {
  const BasicMxfp4Experts<Tensor>& m = w.mxfp4;
  const int64_t E = moe_.num_experts, I = moe_.moe_intermediate_size, H = hidden_;
  const std::vector<int64_t> gu_blocks{E, 2 * I, H / 32, 16}, gu_scales{E, 2 * I, H / 32},
      d_blocks{E, H, I / 32, 16}, d_scales{E, H, I / 32};
  auto bytes = [](const Tensor& t, const std::vector<int64_t>& shape, const char* what) {
    if (!t.defined() || t.dtype() != DType::u8 || t.sizes() != shape) {
      throw std::invalid_argument(std::string("MoeLayer: gpt_oss expert ") + what +
                                  " missing or not uint8 of the config's shape");
    }
    return static_cast<const uint8_t*>(t.data_ptr());
  };
  const uint8_t* gub = bytes(m.gate_up_blocks, gu_blocks, "gate_up_proj_blocks");
  const uint8_t* gus = bytes(m.gate_up_scales, gu_scales, "gate_up_proj_scales");
  const uint8_t* db = bytes(m.down_blocks, d_blocks, "down_proj_blocks");
  const uint8_t* ds = bytes(m.down_scales, d_scales, "down_proj_scales");
  const Tensor rb = f32(w.router_bias, "router bias"), gub_f = f32(m.gate_up_bias, "gate_up bias"),
               db_f = f32(m.down_bias, "down bias");
  if (rb.numel() != E || gub_f.numel() != E * 2 * I || db_f.numel() != E * H) {
    throw std::invalid_argument("MoeLayer: gpt_oss bias shapes do not match the config");
  }
  router_bias_.assign(rb.data_ptr<float>(), rb.data_ptr<float>() + E);
  // A gate_up row holds H / 32 blocks of 16 bytes and H / 32 scales; row 2i is gate row i and
  // row 2i + 1 up row i, which go to rows i and I + i.
  const int64_t row_bytes = H / 2, row_scales = H / 32;
  std::vector<uint8_t> blocks(size_t(2 * I * row_bytes)), scales(size_t(2 * I * row_scales));
  for (int64_t e = 0; e < E; ++e) {
    const uint8_t* eb = gub + e * 2 * I * row_bytes;
    const uint8_t* es = gus + e * 2 * I * row_scales;
    const float* bias = gub_f.data_ptr<float>() + e * 2 * I;
    std::vector<float> split_bias(size_t(2 * I));
    for (int64_t r = 0; r < 2 * I; ++r) {
      const int64_t to = (r % 2 == 0) ? r / 2 : I + r / 2;
      std::memcpy(blocks.data() + to * row_bytes, eb + r * row_bytes, size_t(row_bytes));
      std::memcpy(scales.data() + to * row_scales, es + r * row_scales, size_t(row_scales));
      split_bias[size_t(to)] = bias[r];
    }
    gate_up_.emplace_back(Mxfp4Matrix{blocks.data(), scales.data(), 2 * I, H});
    gate_up_bias_.push_back(std::move(split_bias));
    down_.emplace_back(Mxfp4Matrix{db + e * H * (I / 2), ds + e * H * (I / 32), H, I});
    const float* dbias = db_f.data_ptr<float>() + e * H;
    down_bias_.emplace_back(dbias, dbias + H);
  }
}

void MoeLayer::run(const float* x, int64_t rows, float* y, MoeScratch* s) const {
  const int64_t H = hidden_, E = moe_.num_experts, k = moe_.num_experts_per_tok;
  const int64_t I = moe_.moe_intermediate_size, A = rows * k;  // A: (row, expert) assignments
  last_rows_.assign(size_t(E), 0);
  if (rows == 0) return;

  // 1. Route: one product for the router logits, then softmax / top-k per row.
  float* logits = grow(s->logits, rows * E);
  router_.run(x, rows, router_bias_.empty() ? nullptr : router_bias_.data(), logits, false);
  int32_t* experts = grow(s->experts, A);
  float* weights = grow(s->weights, A);
  parallel_for(0, rows, 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      route_row(logits + r * E, moe_, experts + r * k, weights + r * k);
  });

  // 2. Group: a counting sort of the assignments by expert, rows ascending within an expert.
  int32_t* start = grow(s->count, E + 1);
  std::fill(start, start + E + 1, 0);
  for (int64_t a = 0; a < A; ++a) ++start[experts[a] + 1];
  for (int64_t e = 0; e < E; ++e) {
    start[e + 1] += start[e];
    last_rows_[size_t(e)] = start[e + 1] - start[e];
  }
  int32_t* slot = grow(s->slot, A);
  int32_t* row_of = grow(s->row_of, A);
  {
    std::vector<int32_t> next(start, start + E);
    for (int64_t a = 0; a < A; ++a) {
      const int32_t g = next[size_t(experts[a])]++;
      slot[a] = g;
      row_of[g] = int32_t(a / k);
    }
  }
  float* gathered = grow(s->gathered, A * H);
  parallel_for(0, A, 64, [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      std::memcpy(gathered + g * H, x + int64_t{row_of[g]} * H, sizeof(float) * H);
    }
  });

  // 3. Each used expert: one gate/up product and one down product over its gathered rows.
  float* gu = grow(s->gate_up, A * 2 * I);
  float* act = grow(s->act, A * I);
  float* out = grow(s->expert_out, A * H);
  for (int64_t e = 0; e < E; ++e) {
    const int64_t begin = start[e], n = start[e + 1] - start[e];
    if (n == 0) continue;
    // gpt_oss: biased experts and the clamped SwiGLU; the others: no biases, SiLU.
    const bool biased = moe_.gpt_oss_experts;
    gate_up_[size_t(e)].run(gathered + begin * H, n,
                            biased ? gate_up_bias_[size_t(e)].data() : nullptr, gu + begin * 2 * I,
                            false);
    if (biased) {
      clamped_swiglu_rows(gu + begin * 2 * I, n, I, moe_.swiglu_limit, kGptOssSwigluAlpha,
                          act + begin * I);
    } else {
      silu_mul_rows(gu + begin * 2 * I, n, I, act + begin * I);
    }
    down_[size_t(e)].run(act + begin * I, n, biased ? down_bias_[size_t(e)].data() : nullptr,
                         out + begin * H, false);
  }

  // 4. Scatter: each row sums its experts' weighted outputs in ascending expert order (as HF's
  // index_add_ over experts does), then the shared experts, then joins the residual stream.
  float* moe_out = grow(s->moe_out, rows * H);
  parallel_for(0, rows, 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float* dst = moe_out + r * H;
      std::memset(dst, 0, sizeof(float) * H);
      for (int64_t j = 0; j < k; ++j) {
        const float w = weights[r * k + j];
        const float* src = out + int64_t{slot[r * k + j]} * H;
        for (int64_t i = 0; i < H; ++i) dst[i] += w * src[i];
      }
    }
  });
  if (shared_width_ > 0) {
    float* sgu = grow(s->gate_up, std::max(A * 2 * I, rows * 2 * shared_width_));
    float* sact = grow(s->act, std::max(A * I, rows * shared_width_));
    shared_gate_up_.run(x, rows, nullptr, sgu, false);
    silu_mul_rows(sgu, rows, shared_width_, sact);
    if (!shared_gate_.empty()) scale_by_shared_gate(x, rows, sact);
    shared_down_.run(sact, rows, nullptr, moe_out, true);
  }
  parallel_for(0, rows, 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      for (int64_t i = 0; i < H; ++i) y[r * H + i] += moe_out[r * H + i];
    }
  });
}

}  // namespace ps
