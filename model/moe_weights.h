#pragma once
// The tensors of one sparse MLP on the serve path (weights_layout.h over ps::Tensor).
#include "model/tensor.h"
#include "model/weights_layout.h"

namespace ps {

using ExpertWeights = BasicExpertWeights<Tensor>;
using MoeLayerWeights = BasicMoeLayerWeights<Tensor>;

}  // namespace ps
