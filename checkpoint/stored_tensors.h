#pragma once
// The tensors a checkpoint file stores for a model's weights, in the family's own names: the
// engine's slots (weights_layout.h), except that the tensors a family keeps fused
// (model/fused_projections.h: Phi-3's qkv_proj and gate_up_proj, Qwen3-Next's per-key-head
// in_proj_qkvz and in_proj_ba, Qwen3.5-MoE's stacked experts) are put back together, each slot's
// rows where the family keeps them, placed where its first slot was. What make-tiny-model and
// convert write.
#include <string>
#include <vector>

#include "checkpoint/safetensors_writer.h"
#include "model/model_weights.h"

namespace ps {

struct StoredTensor {
  std::string name;
  Tensor tensor;  // at the requested dtype, contiguous
};

std::vector<StoredTensor> stored_tensors(const ModelWeights& weights, DType dtype);

// The safetensors entries that write `stored` (f32, bf16, f16 or u8 tensors): views of their data,
// so `stored` must outlive the write.
std::vector<SafetensorsEntry> safetensors_entries(const std::vector<StoredTensor>& stored);

}  // namespace ps
