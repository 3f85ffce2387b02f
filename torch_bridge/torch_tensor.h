#pragma once
// Between the serve path's ps::Tensor and libtorch's at::Tensor, for the code that earns
// libtorch: training (autograd), the tests' PyTorch oracle (reference/), and writing .pth files.
// The serving binary never links this library (tests/tools/check_layout.sh, ldd check).
#include <ATen/ATen.h>

#include "model/model_weights.h"
#include "model/tensor.h"
#include "model/weights_layout.h"

namespace ps {

at::ScalarType to_torch_dtype(DType t);
DType from_torch_dtype(at::ScalarType t);  // throws std::invalid_argument on complex/quantized

// A zero-copy view: the at::Tensor keeps `t`'s buffer alive. Undefined stays undefined.
at::Tensor to_torch(const Tensor& t);
// A zero-copy view of a contiguous copy of `t` (the ps::Tensor keeps it alive).
Tensor from_torch(const at::Tensor& t);

using TorchLayerWeights = BasicLayerWeights<at::Tensor>;
using TorchMoeLayerWeights = BasicMoeLayerWeights<at::Tensor>;
using TorchWeightSlot = BasicWeightSlot<at::Tensor>;
struct TorchWeights : BasicModelWeights<at::Tensor> {};

// Every slot converted with to_torch / from_torch (views; tied lm_head stays tied).
TorchWeights to_torch(const ModelWeights& w);
ModelWeights from_torch(const TorchWeights& w);

std::vector<TorchWeightSlot> weight_slots(TorchWeights& w);

}  // namespace ps
