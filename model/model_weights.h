#pragma once
// The serve path's weights: weights_layout.h's structure over ps::Tensor (no libtorch).
#include <vector>

#include "model/model_dtype.h"
#include "model/moe_weights.h"
#include "model/tensor.h"
#include "model/weights_layout.h"

namespace ps {

using LayerWeights = BasicLayerWeights<Tensor>;
using WeightSlot = BasicWeightSlot<Tensor>;

// A struct, not an alias, so headers can forward-declare it.
struct ModelWeights : BasicModelWeights<Tensor> {};

// basic_weight_slots (weights_layout.h) for the serve path's weights.
std::vector<WeightSlot> weight_slots(ModelWeights& weights);

// --kv-cache-dtype auto resolved for these weights: the model's dtype is its embedding table's
// (after --dtype), the one test both the pool's sizing and the runner make.
inline KvCacheDtype kv_cache_dtype_for(const ModelWeights& weights, KvCacheDtype requested) {
  return resolve_kv_cache_dtype(requested, weights.embed_tokens.dtype() == DType::bf16);
}

}  // namespace ps
