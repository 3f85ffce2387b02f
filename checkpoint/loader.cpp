#include "checkpoint/loader.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "checkpoint/safetensors_reader.h"
#include "checkpoint/tensor_errors.h"
#include "kernels/parallel_for.h"
#include "model/fused_projections.h"
#include "model/half_bits.h"
#include "model/model_weights.h"
#include "model/shape_string.h"

namespace ps {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

// The safetensors files of a checkpoint and which one holds each tensor.
class CheckpointFiles {
 public:
  explicit CheckpointFiles(const std::string& dir) {
    const fs::path single = fs::path(dir) / kSingleFile;
    const fs::path index = fs::path(dir) / kIndexFile;
    // The single file wins when both exist, as in Hugging Face transformers.
    if (fs::exists(single)) {
      listing_ = single.string();
      open_single(single.string());
    } else if (fs::exists(index)) {
      listing_ = index.string();
      open_sharded(dir, index.string());
    } else {
      throw std::runtime_error(dir + ": no " + kSingleFile + " and no " + kIndexFile);
    }
  }

  struct Found {
    const SafetensorsFile* file;
    const SafetensorsTensor* tensor;
  };

  // `name` as the engine's slots spell it ("model.layers.0...", "lm_head.weight"), or where a
  // multimodal checkpoint keeps its language model: Gemma 3's saves it under
  // "language_model.model." (its first releases) or "model.language_model." (transformers 4.52+).
  const Found* find(const std::string& name) const {
    if (const Found* f = exact(name)) return f;
    if (name.starts_with("model.")) {
      const std::string rest = name.substr(6);
      if (const Found* f = exact("language_model.model." + rest)) return f;
      return exact("model.language_model." + rest);
    }
    if (name == "lm_head.weight") return exact("language_model.lm_head.weight");
    return nullptr;
  }

  // The file that lists tensors: named when a tensor is missing from all of them.
  const std::string& listing() const { return listing_; }

  // Shared ownership of an open file, so tensors that view its mapping keep it alive.
  std::shared_ptr<const SafetensorsFile> owner(const SafetensorsFile* f) const {
    for (const auto& p : files_) {
      if (p.get() == f) return p;
    }
    return nullptr;
  }
  const std::vector<std::shared_ptr<SafetensorsFile>>& files() const { return files_; }

 private:
  void open_single(const std::string& path) {
    files_.push_back(std::make_shared<SafetensorsFile>(SafetensorsFile::open(path)));
    const SafetensorsFile& f = *files_.back();
    for (const SafetensorsTensor& t : f.header().tensors) where_[t.name] = Found{&f, &t};
  }

  void open_sharded(const std::string& dir, const std::string& index_path) {
    std::ifstream in(index_path, std::ios::binary);
    if (!in) throw std::runtime_error(index_path + ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    json j;
    try {
      j = json::parse(text.str());
    } catch (const json::exception& e) {
      throw std::runtime_error(index_path + ": invalid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("weight_map") || !j.at("weight_map").is_object()) {
      throw std::runtime_error(index_path + ": no \"weight_map\" object");
    }
    std::unordered_map<std::string, const SafetensorsFile*> by_name;
    for (const auto& [tensor, shard] : j.at("weight_map").items()) {
      if (!shard.is_string())
        fail_tensor(index_path, tensor, "weight_map value is not a file name");
      const std::string shard_name = shard.get<std::string>();
      // A plain file name inside the model directory: never follow a path elsewhere.
      if (shard_name.empty() || shard_name.find('/') != std::string::npos || shard_name == "." ||
          shard_name == "..") {
        fail_tensor(index_path, tensor,
                    "weight_map names \"" + shard_name +
                        "\", which is not a file name in the model directory");
      }
      auto it = by_name.find(shard_name);
      if (it == by_name.end()) {
        const std::string shard_path = (fs::path(dir) / shard_name).string();
        if (!fs::exists(shard_path)) {
          fail_tensor(index_path, tensor, "its shard " + shard_path + " does not exist");
        }
        files_.push_back(std::make_shared<SafetensorsFile>(SafetensorsFile::open(shard_path)));
        it = by_name.emplace(shard_name, files_.back().get()).first;
      }
      const SafetensorsFile* f = it->second;
      const SafetensorsTensor* t = f->header().find(tensor);
      if (t == nullptr) {
        fail_tensor(f->path(), tensor, "listed in " + index_path + " but not in this shard");
      }
      where_[tensor] = Found{f, t};
    }
  }

  const Found* exact(const std::string& name) const {
    const auto it = where_.find(name);
    return it == where_.end() ? nullptr : &it->second;
  }

  std::string listing_;
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::unordered_map<std::string, Found> where_;
};

// Copies one stored tensor into a new fp32 CPU tensor (bf16 GEMM is slow on CPU: docs/anchors.md).
Tensor to_fp32(const CheckpointFiles::Found& src) {
  const SafetensorsTensor& t = *src.tensor;
  const std::span<const uint8_t> bytes = src.file->bytes(t);
  Tensor out = Tensor::empty(t.shape, DType::f32);
  float* dst = out.data_ptr<float>();
  const uint8_t* in = bytes.data();
  switch (t.dtype) {
    case SafetensorsDtype::kF32:
      std::memcpy(dst, in, bytes.size());
      break;
    case SafetensorsDtype::kBF16:
      parallel_for(0, t.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          uint16_t h;
          std::memcpy(&h, in + 2 * i, 2);  // the data need not be 2-byte aligned
          const uint32_t bits = static_cast<uint32_t>(h) << 16;
          std::memcpy(dst + i, &bits, 4);
        }
      });
      break;
    case SafetensorsDtype::kF16:
      parallel_for(0, t.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          uint16_t h;
          std::memcpy(&h, in + 2 * i, 2);
          dst[i] = f16_to_float(h);
        }
      });
      break;
    default:
      fail_tensor(src.file->path(), t.name,
                  std::string("dtype ") + dtype_name(t.dtype) +
                      " is not supported for weights (F32, BF16 and F16 are)");
  }
  return out;
}

DType scalar_type_of(ModelDtype d) {
  switch (d) {
    case ModelDtype::bf16:
      return DType::bf16;
    case ModelDtype::f16:
      return DType::f16;
    case ModelDtype::f32:
    case ModelDtype::auto_dtype:
      break;
  }
  return DType::f32;
}

ModelDtype stored_dtype(const CheckpointFiles& files) {
  const CheckpointFiles::Found* q = files.find("model.layers.0.self_attn.q_proj.weight");
  if (q == nullptr) q = files.find("model.layers.0.self_attn.qkv_proj.weight");  // Phi-3
  // Qwen3.5's first layer is a linear-attention one; the embedding has every model's dtype.
  if (q == nullptr) q = files.find("model.layers.0.linear_attn.in_proj_qkv.weight");
  if (q == nullptr) q = files.find("model.embed_tokens.weight");
  if (q == nullptr) return ModelDtype::f32;
  if (q->tensor->dtype == SafetensorsDtype::kBF16) return ModelDtype::bf16;
  if (q->tensor->dtype == SafetensorsDtype::kF16) return ModelDtype::f16;
  return ModelDtype::f32;
}

// A matrix at `want`: a view of the mapping when the file stores exactly that (and 2-byte
// aligned, as every writer we know aligns), else a converted copy.
Tensor load_matrix(const CheckpointFiles& files, const CheckpointFiles::Found& src, DType want,
                   bool* viewed) {
  if (want == DType::f32) return to_fp32(src);
  const SafetensorsTensor& t = *src.tensor;
  const DType stored = t.dtype == SafetensorsDtype::kBF16  ? DType::bf16
                       : t.dtype == SafetensorsDtype::kF16 ? DType::f16
                                                           : DType::f32;
  const std::span<const uint8_t> bytes = src.file->bytes(t);
  if (stored == want && reinterpret_cast<uintptr_t>(bytes.data()) % 2 == 0) {
    std::shared_ptr<const SafetensorsFile> keep = files.owner(src.file);
    *viewed = true;
    return Tensor::view(const_cast<uint8_t*>(bytes.data()), t.shape, want, std::move(keep));
  }
  return to_fp32(src).to(want);
}

// A tensor the engine keeps as raw bytes (MXFP4 blocks and scales): a view of the mapping.
Tensor load_bytes(const CheckpointFiles& files, const CheckpointFiles::Found& src, bool* viewed) {
  const SafetensorsTensor& t = *src.tensor;
  if (t.dtype != SafetensorsDtype::kU8) {
    fail_tensor(src.file->path(), t.name,
                std::string("dtype ") + dtype_name(t.dtype) +
                    " is not supported here (MXFP4 blocks and scales are U8)");
  }
  const std::span<const uint8_t> bytes = src.file->bytes(t);
  *viewed = true;
  return Tensor::view(const_cast<uint8_t*>(bytes.data()), t.shape, DType::u8,
                      files.owner(src.file));
}

// One slot's rows of a fused checkpoint matrix (model/fused_projections.h), which is checked
// against config.json's shape and loaded once into `cache` for all its slots.
Tensor load_fused_rows(const CheckpointFiles& files, const FusedSlice& part, const WeightSlot& slot,
                       const std::string& config_path, DType want, bool* viewed,
                       std::unordered_map<std::string, Tensor>* cache) {
  auto it = cache->find(part.stored_name);
  if (it == cache->end()) {
    const CheckpointFiles::Found* src = files.find(part.stored_name);
    if (src == nullptr) {
      fail_tensor(files.listing(), part.stored_name,
                  "missing (it holds " + slot.name + "; neither name is in the checkpoint)");
    }
    if (src->tensor->shape != part.stored_shape) {
      fail_tensor(src->file->path(), part.stored_name,
                  "shape " + shape_string(src->tensor->shape) + " does not match " + config_path +
                      ", which implies " + shape_string(part.stored_shape));
    }
    const Tensor stored = load_matrix(files, *src, want, viewed);
    it =
        cache->emplace(part.stored_name, stored.reshape({part.stored_rows(), slot.shape[1]})).first;
  }
  if (part.row_runs.size() == 1) return it->second.rows(part.row_runs[0].first, slot.shape[0]);
  std::vector<Tensor> runs;  // rows the checkpoint interleaves: gathered into one copy
  for (const auto& [begin, count] : part.row_runs) runs.push_back(it->second.rows(begin, count));
  return cat_rows(runs);
}

}  // namespace

ModelDtype resolve_model_dtype(const std::string& model_dir, ModelDtype asked) {
  if (asked != ModelDtype::auto_dtype) return asked;
  return stored_dtype(CheckpointFiles(model_dir));
}

LoadedModel load_model(const std::string& model_dir) {
  return load_model(model_dir, LoadOptions{});
}

LoadedModel load_model(const std::string& model_dir, const LoadOptions& options) {
  ModelConfig config = ModelConfig::from_dir(model_dir);
  const CheckpointFiles files(model_dir);
  const ModelDtype dtype =
      options.dtype == ModelDtype::auto_dtype ? stored_dtype(files) : options.dtype;
  const DType matrix_type = scalar_type_of(dtype);
  bool viewed = false;  // some matrix views the mapping: keep the files open
  const std::string config_path = (fs::path(model_dir) / "config.json").string();

  // A config that leaves tie_word_embeddings to the library default, with a checkpoint that
  // stores no lm_head, can only mean tied weights.
  if (!config.tie_word_embeddings && !config.tie_word_embeddings_stated &&
      files.find("lm_head.weight") == nullptr) {
    config.tie_word_embeddings = true;
  }

  auto weights = std::make_shared<ModelWeights>();
  weights->config = config;
  std::unordered_map<std::string, Tensor> fused;  // a fused matrix, loaded once for its slices
  for (const WeightSlot& slot : weight_slots(*weights)) {
    const CheckpointFiles::Found* src = files.find(slot.name);
    const std::optional<FusedSlice> part = fused_slice_of(config, slot.name);
    if (src == nullptr && part) {  // a family that stores it fused (a split one loads too)
      *slot.tensor = load_fused_rows(files, *part, slot, config_path, matrix_type, &viewed, &fused);
      continue;
    }
    if (src == nullptr) {
      std::string hint;
      if (slot.name == "lm_head.weight") hint = " (config.json has tie_word_embeddings false)";
      fail_tensor(files.listing(), slot.name,
                  "missing; model_type " + config.model_type + " needs it" + hint);
    }
    if (src->tensor->shape != slot.shape) {
      fail_tensor(src->file->path(), slot.name,
                  "shape " + shape_string(src->tensor->shape) + " does not match " + config_path +
                      ", which implies " + shape_string(slot.shape));
    }
    if (slot.raw_bytes) {
      *slot.tensor = load_bytes(files, *src, &viewed);
      continue;
    }
    *slot.tensor =
        slot.shape.size() == 2 ? load_matrix(files, *src, matrix_type, &viewed) : to_fp32(*src);
  }
  if (viewed) {
    for (const auto& f : files.files()) weights->mapped.push_back(f);
  }
  if (config.tie_word_embeddings) weights->lm_head = weights->embed_tokens;
  return LoadedModel{config, std::move(weights)};
}

}  // namespace ps
