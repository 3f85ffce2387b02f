#include "train/export_model.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "model/model_weights.h"
#include "model/safetensors_writer.h"

namespace ps {
namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error(tmp.string() + ": cannot write");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

void export_model(const std::string& dir, const ModelWeights& weights,
                  const std::string& tokenizer_json, WeightDtype dtype) {
  // make-tiny-model owns the config/tokenizer_config/generation_config layout; reuse it whole
  // and replace its two random parts (weights and a tokenizer learned from another corpus).
  TinyModelOptions o;
  o.config = weights.config;
  o.dtype = dtype;
  write_tiny_model(dir, o);
  write_text(std::filesystem::path(dir) / "tokenizer.json", tokenizer_json);

  const at::ScalarType st = dtype == WeightDtype::kBF16  ? at::kBFloat16
                            : dtype == WeightDtype::kF16 ? at::kHalf
                                                         : at::kFloat;
  const SafetensorsDtype sd = dtype == WeightDtype::kBF16  ? SafetensorsDtype::kBF16
                              : dtype == WeightDtype::kF16 ? SafetensorsDtype::kF16
                                                           : SafetensorsDtype::kF32;
  ModelWeights copy = weights;  // weight_slots wants a mutable struct; tensors are shared
  std::vector<at::Tensor> stored;
  std::vector<SafetensorsEntry> entries;
  const std::vector<WeightSlot> slots = weight_slots(copy);
  stored.reserve(slots.size());
  for (const WeightSlot& slot : slots) {
    stored.push_back(slot.tensor->detach().to(st).contiguous());
    const at::Tensor& t = stored.back();
    entries.push_back({slot.name, sd, slot.shape,
                       std::span<const uint8_t>(static_cast<const uint8_t*>(t.data_ptr()),
                                                static_cast<size_t>(t.nbytes()))});
  }
  write_safetensors_file((std::filesystem::path(dir) / "model.safetensors").string(), entries,
                         {{"format", "pt"}});
}

}  // namespace ps
