#include "checkpoint/random_weights.h"

#include "kernels/parallel_for.h"
#include "model/model_weights.h"

#include <cmath>
#include <memory>
#include <numbers>
#include <string>

#include "checkpoint/loader.h"

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

ModelWeights make_random_weights(const ModelConfig& config, uint64_t seed) {
  config.validate("random weights");
  ModelWeights w;
  w.config = config;
  for (WeightSlot& slot : weight_slots(w)) {
    Tensor t = Tensor::empty(slot.shape, DType::f32);
    if (is_norm_weight(slot.name) && config.gemma_layout()) {
      // Gemma applies (1 + w): weights near 0 (its init is zeros), not all 0, so that a runner
      // that forgot the 1, or applied w alone, is visibly wrong.
      fill_normal(t, tensor_key(seed, slot.name), 0.1f);
    } else if (is_norm_weight(slot.name)) {
      t.fill(1.0f);
    } else {
      fill_normal(t, tensor_key(seed, slot.name), kInitStd);
    }
    *slot.tensor = t;
  }
  if (config.tie_word_embeddings) w.lm_head = w.embed_tokens;
  return w;
}

LoadedModel random_model(const ModelConfig& config, uint64_t seed) {
  auto weights = std::make_shared<ModelWeights>(make_random_weights(config, seed));
  return LoadedModel{weights->config, std::move(weights)};
}

}  // namespace ps
