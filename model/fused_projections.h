#pragma once
// Checkpoints that store several projections as one matrix: Phi-3 writes q, k and v as rows of
// `self_attn.qkv_proj.weight` and the MLP's gate and up as `mlp.gate_up_proj.weight` (gate
// first). The engine holds each projection on its own (weights_layout.h's slots), so the loader
// splits such a matrix by rows at load (a view, no copy) and make-tiny-model writes it fused.
#include <cstdint>
#include <optional>
#include <string>

#include "model/model_config.h"

namespace ps {

// Where one of the engine's slots lives inside a fused checkpoint tensor.
struct FusedSlice {
  std::string stored_name;  // the checkpoint's tensor
  int64_t stored_rows = 0;  // its row count (its columns are the slot's)
  int64_t row_begin = 0;    // the slot's first row in it
};

// The fused tensor that holds `slot_name` for c's family, or nullopt when the family stores the
// slot under its own name.
std::optional<FusedSlice> fused_slice_of(const ModelConfig& c, const std::string& slot_name);

}  // namespace ps
