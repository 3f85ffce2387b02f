#include "checkpoint/random_weights.h"

#include "kernels/parallel_for.h"
#include "model/model_weights.h"

#include <cmath>
#include <map>
#include <memory>
#include <numbers>
#include <string>

#include "checkpoint/loader.h"
#include "kernels/mxfp4.h"

namespace ps {
namespace {

constexpr float kInitStd = 0.02f;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t tensor_key(uint64_t seed, const std::string& name) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001B3ull;
  return splitmix64(seed ^ splitmix64(h));
}

// Box-Muller on one 64-bit draw per element: counter-based, so any thread split gives the same
// values. Computed in double so the float result does not depend on vectorisation.
void fill_normal(Tensor& t, uint64_t key, float std_dev) {
  float* out = t.data_ptr<float>();
  parallel_for(0, t.numel(), 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t bits = splitmix64(key + static_cast<uint64_t>(i));
      const double u1 = (static_cast<double>(bits >> 40) + 1.0) * 0x1p-24;  // (0, 1]
      const double u2 = static_cast<double>((bits >> 16) & 0xFFFFFF) * 0x1p-24;
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      out[i] = static_cast<float>(z * std_dev);
    }
  });
}

bool is_norm_weight(const std::string& name) {
  return name.ends_with("layernorm.weight") || name.ends_with("_norm.weight") ||
         name == "model.norm.weight";
}

}  // namespace

ModelWeights make_random_weights(const ModelConfig& config, uint64_t seed, DType dtype) {
  config.validate("random weights");
  ModelWeights w;
  w.config = config;
  std::map<std::string, Tensor> mxfp4_scales;  // made with their blocks, placed in their slot
  for (WeightSlot& slot : weight_slots(w)) {
    if (slot.raw_bytes && slot.name.ends_with("_scales")) {
      *slot.tensor = mxfp4_scales.at(slot.name);
      continue;
    }
    if (slot.raw_bytes) {  // MXFP4 blocks [.., rows, k / 32, 16]: normal weights, rounded
      const int64_t k = slot.shape[slot.shape.size() - 2] * 32;
      int64_t rows = 1;
      for (size_t d = 0; d + 2 < slot.shape.size(); ++d) rows *= slot.shape[d];
      Tensor dense = Tensor::empty({rows, k}, DType::f32);
      fill_normal(dense, tensor_key(seed, slot.name), kInitStd);
      Tensor blocks = Tensor::empty(slot.shape, DType::u8);
      std::vector<int64_t> scale_shape(slot.shape.begin(), slot.shape.end() - 1);
      Tensor scales = Tensor::empty(scale_shape, DType::u8);
      mxfp4_quantize(dense.data_ptr<float>(), rows, k, static_cast<uint8_t*>(blocks.data_ptr()),
                     static_cast<uint8_t*>(scales.data_ptr()));
      *slot.tensor = blocks;
      const std::string stem = slot.name.substr(0, slot.name.size() - std::string("blocks").size());
      mxfp4_scales[stem + "scales"] = scales;
      continue;
    }
    Tensor t = Tensor::empty(slot.shape, DType::f32);
    if (slot.name.ends_with("self_attn.sinks")) {
      fill_normal(t, tensor_key(seed, slot.name), 1.0f);  // O(1), as trained sinks are
    } else if (slot.name.ends_with("linear_attn.A_log")) {
      // A = exp(A_log) in (1, 16), as Qwen3.5 initializes it: decays that differ per head.
      fill_normal(t, tensor_key(seed, slot.name), 1.0f);
      float* a = t.data_ptr<float>();
      for (int64_t i = 0; i < t.numel(); ++i)
        a[i] = std::log(1.0f + 15.0f / (1.0f + std::exp(-a[i])));
    } else if (slot.name.ends_with("linear_attn.dt_bias") ||
               slot.name.ends_with("linear_attn.norm.weight")) {
      // Near 1 (their init is ones; the gated norm applies w itself), not all 1.
      fill_normal(t, tensor_key(seed, slot.name), 0.1f);
      float* a = t.data_ptr<float>();
      for (int64_t i = 0; i < t.numel(); ++i) a[i] += 1.0f;
    } else if (slot.name.ends_with("linear_attn.conv1d.weight")) {
      fill_normal(t, tensor_key(seed, slot.name), 0.5f);  // ~ the 1/sqrt(K) of a default init
    } else if (is_norm_weight(slot.name) && config.norms_add_one()) {
      // Gemma and Qwen3.5 apply (1 + w): weights near 0 (its init is zeros), not all 0, so that a
      // runner that forgot the 1, or applied w alone, is visibly wrong.
      fill_normal(t, tensor_key(seed, slot.name), 0.1f);
    } else if (is_norm_weight(slot.name)) {
      t.fill(1.0f);
    } else {
      fill_normal(t, tensor_key(seed, slot.name), kInitStd);
    }
    *slot.tensor = t.to(dtype);
  }
  if (config.tie_word_embeddings) w.lm_head = w.embed_tokens;
  return w;
}

LoadedModel random_model(const ModelConfig& config, uint64_t seed) {
  auto weights = std::make_shared<ModelWeights>(make_random_weights(config, seed));
  return LoadedModel{weights->config, std::move(weights)};
}

}  // namespace ps
