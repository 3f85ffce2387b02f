#include "cpu/lowbit_weights.h"

#include <cstring>

#include "checkpoint/mapped_pages.h"
#include "model/half_bits.h"

namespace ps {

PanelFormat panel_format_for(DType t, WeightQuantization q) {
  if (q == WeightQuantization::int8) return PanelFormat::i8;
  return panel_format_of(t);
}

void gather_embedding_rows(const Tensor& table, const int32_t* ids, int64_t count, float* out) {
  const int64_t H = table.size(1);
  if (table.dtype() == DType::f32) {
    const float* emb = table.data_ptr<float>();
    for (int64_t t = 0; t < count; ++t) {
      std::memcpy(out + t * H, emb + int64_t{ids[t]} * H, sizeof(float) * H);
    }
    return;
  }
  const bool bf16 = table.dtype() == DType::bf16;
  const auto* emb = static_cast<const uint16_t*>(table.data_ptr());
  for (int64_t t = 0; t < count; ++t) {
    const uint16_t* row = emb + int64_t{ids[t]} * H;
    float* o = out + t * H;
    for (int64_t i = 0; i < H; ++i) o[i] = bf16 ? bf16_to_float(row[i]) : f16_to_float(row[i]);
  }
}

void release_layer_pages(const ModelWeights& weights, const LayerWeights& l) {
  for (const Tensor* t :
       {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj}) {
    release_mapped_pages(weights, *t);
  }
}

}  // namespace ps
