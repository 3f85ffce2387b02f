#include "checkpoint/stored_tensors.h"

#include <cstring>
#include <map>

#include "model/fused_projections.h"

namespace ps {

namespace {

// A fused tensor being put back together: its place in the output and each slot's rows.
struct FusedParts {
  size_t place = 0;
  FusedSlice shape;  // stored_name and stored_shape (the runs are each part's own)
  std::vector<std::pair<FusedSlice, Tensor>> parts;
};

// The stored tensor whose row runs the parts fill; each part's rows go to its runs in order.
Tensor assemble(const FusedParts& f, DType dtype) {
  const int64_t rows = f.shape.stored_rows();
  const int64_t cols = f.shape.stored_shape.back();
  Tensor out = Tensor::zeros({rows, cols}, dtype);
  for (const auto& [slice, part] : f.parts) {
    int64_t src_row = 0;
    for (const auto& [begin, count] : slice.row_runs) {
      const Tensor dst = out.rows(begin, count);
      std::memcpy(dst.data_ptr(), part.rows(src_row, count).data_ptr(), dst.nbytes());
      src_row += count;
    }
  }
  return out.reshape(f.shape.stored_shape);
}

}  // namespace

std::vector<StoredTensor> stored_tensors(const ModelWeights& weights, DType dtype) {
  ModelWeights copy = weights;  // weight_slots needs a mutable struct; the tensors are shared
  std::vector<StoredTensor> out;
  std::map<std::string, FusedParts> fused;
  for (const WeightSlot& slot : weight_slots(copy)) {
    const std::optional<FusedSlice> part = fused_slice_of(copy.config, slot.name);
    if (!part) {
      out.push_back({slot.name, slot.raw_bytes ? *slot.tensor : slot.tensor->to(dtype)});
      continue;
    }
    auto it = fused.find(part->stored_name);
    if (it == fused.end()) {
      it = fused.emplace(part->stored_name, FusedParts{out.size(), *part, {}}).first;
      out.push_back({part->stored_name, Tensor()});
    }
    it->second.parts.push_back({*part, slot.tensor->to(dtype)});
  }
  for (auto& [name, f] : fused) out[f.place].tensor = assemble(f, dtype);
  return out;
}

std::vector<SafetensorsEntry> safetensors_entries(const std::vector<StoredTensor>& stored) {
  std::vector<SafetensorsEntry> entries;
  for (const StoredTensor& t : stored) {
    const DType d = t.tensor.dtype();
    const SafetensorsDtype sd = d == DType::bf16  ? SafetensorsDtype::kBF16
                                : d == DType::f16 ? SafetensorsDtype::kF16
                                : d == DType::u8  ? SafetensorsDtype::kU8
                                                  : SafetensorsDtype::kF32;
    entries.push_back({t.name, sd, t.tensor.sizes(),
                       std::span<const uint8_t>(static_cast<const uint8_t*>(t.tensor.data_ptr()),
                                                t.tensor.nbytes())});
  }
  return entries;
}

}  // namespace ps
