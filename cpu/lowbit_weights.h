#pragma once
// The runner's side of narrow weights and KV (model_dtype.h): packing a matrix at its own dtype
// or quantized, reading embedding rows of any float dtype, releasing a packed layer's mapped
// checkpoint pages. Torch-free.
#include <cstdint>

#include "cpu/projection.h"
#include "model/model_dtype.h"
#include "model/model_weights.h"

namespace ps {

// The panel format a matrix of dtype `t` is packed to: int8 when quantizing, else its own.
PanelFormat panel_format_for(DType t, WeightQuantization q);

// out[t, :] = table[ids[t], :] widened to fp32; table is [vocab, hidden] fp32, bf16 or f16.
void gather_embedding_rows(const Tensor& table, const int32_t* ids, int64_t count, float* out);

// Drops the mapped checkpoint pages of a layer's matrices once they are packed.
void release_layer_pages(const ModelWeights& weights, const LayerWeights& layer);

}  // namespace ps
