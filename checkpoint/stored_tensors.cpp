#include "checkpoint/stored_tensors.h"

#include <map>

#include "model/fused_projections.h"

namespace ps {

std::vector<StoredTensor> stored_tensors(const ModelWeights& weights, DType dtype) {
  ModelWeights copy = weights;  // weight_slots needs a mutable struct; the tensors are shared
  std::vector<StoredTensor> out;
  // A fused tensor's parts, in row order, and its place in `out`.
  std::map<std::string, std::pair<size_t, std::map<int64_t, Tensor>>> fused;
  for (const WeightSlot& slot : weight_slots(copy)) {
    const std::optional<FusedSlice> part = fused_slice_of(copy.config, slot.name);
    if (!part) {
      out.push_back({slot.name, slot.raw_bytes ? *slot.tensor : slot.tensor->to(dtype)});
      continue;
    }
    auto it = fused.find(part->stored_name);
    if (it == fused.end()) {
      it = fused.emplace(part->stored_name, std::make_pair(out.size(), std::map<int64_t, Tensor>()))
               .first;
      out.push_back({part->stored_name, Tensor()});
    }
    it->second.second[part->row_begin] = slot.tensor->to(dtype);
  }
  for (auto& [name, place] : fused) {
    std::vector<Tensor> parts;
    for (auto& [row, t] : place.second) parts.push_back(t);
    out[place.first].tensor = cat_rows(parts);
  }
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
