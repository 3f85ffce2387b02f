#pragma once
// The serve path's weights: weights_layout.h's structure over ps::Tensor (no libtorch).
#include <vector>

#include "model/moe_weights.h"
#include "model/safetensors_reader.h"
#include "model/tensor.h"
#include "model/weights_layout.h"

namespace ps {

using LayerWeights = BasicLayerWeights<Tensor>;
using WeightSlot = BasicWeightSlot<Tensor>;

// A struct, not an alias, so headers can forward-declare it.
struct ModelWeights : BasicModelWeights<Tensor> {};

// Drops the resident pages of `t` when it views one of weights.mapped (a read-only file
// mapping: a later read faults them back in from the file), so a matrix the runner has packed
// costs no memory twice. Anything else (an fp32 copy, a converted tensor) is left alone.
void release_mapped_pages(const ModelWeights& weights, const Tensor& t);

// basic_weight_slots (weights_layout.h) for the serve path's weights.
std::vector<WeightSlot> weight_slots(ModelWeights& weights);

}  // namespace ps
