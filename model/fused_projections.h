#pragma once
// Checkpoints that store several of the engine's matrices as one tensor. The engine holds each
// projection on its own (weights_layout.h's slots); the loader cuts such a tensor by rows at load
// (a view when the slot is one run of rows, else a copy), and the writer (make-tiny-model,
// convert) puts the slots back together the family's way:
//  - Phi-3: q, k and v as rows of `self_attn.qkv_proj.weight`, the MLP's gate and up as
//    `mlp.gate_up_proj.weight` (gate first).
//  - Qwen3-Next: a Gated DeltaNet layer's `linear_attn.in_proj_qkvz.weight` groups its rows per
//    key head (that head's q, k, its value heads' v, then their z) and `in_proj_ba.weight` per key
//    head (its value heads' b, then a); the engine's in_proj_qkv is every q, every k, every v.
//  - Qwen3.5-MoE (transformers v5): a layer's experts as `mlp.experts.gate_up_proj` [E, 2I, H]
//    (each expert's gate rows, then its up rows) and `mlp.experts.down_proj` [E, H, I].
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model_config.h"

namespace ps {

// Where one of the engine's slots lives inside a fused checkpoint tensor.
struct FusedSlice {
  std::string stored_name;            // the checkpoint's tensor
  std::vector<int64_t> stored_shape;  // its shape; the last size is the slot's column count
  // The slot's rows, in order, as [begin, begin + count) runs over the stored tensor read as
  // rows of its last size.
  std::vector<std::pair<int64_t, int64_t>> row_runs;
  int64_t stored_rows() const;  // the stored tensor's row count, read that way
};

// The fused tensor that holds `slot_name` for c's family, or nullopt when the family stores the
// slot under its own name.
std::optional<FusedSlice> fused_slice_of(const ModelConfig& c, const std::string& slot_name);

}  // namespace ps
