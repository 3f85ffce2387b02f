#include "convert/convert_writer.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "checkpoint/safetensors_writer.h"
#include "checkpoint/stored_tensors.h"
#include "model/model_weights.h"

namespace ps {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

void write_text(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error(tmp.string() + ": cannot write");
  }
  fs::rename(tmp, path);
}

}  // namespace

WeightDtype parse_weight_dtype(const std::string& text, const std::string& flag) {
  if (text == "f32" || text == "float32") return WeightDtype::kF32;
  if (text == "bf16" || text == "bfloat16") return WeightDtype::kBF16;
  if (text == "f16" || text == "float16") return WeightDtype::kF16;
  throw std::runtime_error(flag + " must be f32, bf16 or f16, got '" + text + "'");
}

void write_weights_safetensors(const std::string& path, const ModelWeights& weights,
                               WeightDtype dtype) {
  const DType st = dtype == WeightDtype::kBF16  ? DType::bf16
                   : dtype == WeightDtype::kF16 ? DType::f16
                                                : DType::f32;
  const std::vector<StoredTensor> stored = stored_tensors(weights, st);
  const std::vector<SafetensorsEntry> entries = safetensors_entries(stored);
  write_safetensors_file(path, entries, {{"format", "pt"}});
}

void write_checkpoint(const std::string& dir_name, const ModelWeights& weights, WeightDtype dtype,
                      const std::vector<std::string>& copy_files) {
  const fs::path dir(dir_name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir_name + ": cannot create directory: " + ec.message());

  bool copied_generation_config = false;
  for (const std::string& src : copy_files) {
    const fs::path to = dir / fs::path(src).filename();
    if (fs::exists(to) && fs::equivalent(src, to)) continue;
    fs::copy_file(src, to, fs::copy_options::overwrite_existing, ec);
    if (ec) throw std::runtime_error(src + ": cannot copy to " + to.string() + ": " + ec.message());
    copied_generation_config |= fs::path(src).filename() == "generation_config.json";
  }

  const ModelConfig& c = weights.config;
  ordered_json config = ordered_json::parse(c.to_json());
  config["torch_dtype"] = dtype == WeightDtype::kBF16  ? "bfloat16"
                          : dtype == WeightDtype::kF16 ? "float16"
                                                       : "float32";
  write_text(dir / "config.json", config.dump(2) + "\n");
  if (!copied_generation_config) {
    ordered_json gen = {{"do_sample", false}};
    if (c.bos_token_id >= 0) gen["bos_token_id"] = c.bos_token_id;
    if (!c.eos_token_ids.empty()) gen["eos_token_id"] = c.eos_token_ids;
    write_text(dir / "generation_config.json", gen.dump(2) + "\n");
  }

  // The loader prefers model.safetensors, but remove a stale sharded layout anyway so the
  // directory holds exactly one checkpoint.
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name == "model.safetensors.index.json" ||
        (name.rfind("model-", 0) == 0 && entry.path().extension() == ".safetensors")) {
      fs::remove(entry.path(), ec);
    }
  }
  write_weights_safetensors((dir / "model.safetensors").string(), weights, dtype);
}

}  // namespace ps
