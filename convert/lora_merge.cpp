#include "convert/lora_merge.h"

#include <cblas.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "convert/convert_writer.h"
#include "convert/lora_reader.h"
#include "model/model_weights.h"

namespace ps {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

}  // namespace

LoadedModel merge_lora(const LoadedModel& base, const std::string& adapter, LoraReport* report) {
  const LoraFile file = read_lora_adapter(base.config, adapter);

  auto merged = std::make_shared<ModelWeights>(*base.weights);  // tensors shared until replaced
  std::map<std::string, Tensor*> slots;
  for (const WeightSlot& s : weight_slots(*merged)) slots[s.name] = s.tensor;
  slots["lm_head.weight"] = &merged->lm_head;

  const double scale = file.scale;
  for (const LoraFactors& f : file.modules) {
    Tensor& w = *slots.at(f.hf_name);
    // A new tensor, never in place: the base (and a tied embedding) stays untouched. The same
    // fp32 steps as torch's w + (b @ a) * scale: an sgemm, then one rounding per operation.
    const int64_t n = f.b.size(0), r = f.b.size(1), k = f.a.size(1);
    Tensor delta = Tensor::empty({n, k}, DType::f32);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(n), blasint(k), blasint(r), 1.0f,
                f.b.data_ptr<float>(), blasint(r), f.a.data_ptr<float>(), blasint(k), 0.0f,
                delta.data_ptr<float>(), blasint(k));
    const Tensor base = w.to(DType::f32);
    Tensor out = Tensor::empty({n, k}, DType::f32);
    const float s = float(scale);
    const float* b = base.data_ptr<float>();
    const float* d = delta.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < n * k; ++i) o[i] = b[i] + d[i] * s;
    w = out;
    if (f.hf_name == "lm_head.weight" && merged->config.tie_word_embeddings) {
      merged->config.tie_word_embeddings = false;  // the head now differs from the embedding
    }
  }
  if (report != nullptr) *report = file.report;
  return LoadedModel{merged->config, merged};
}

LoraReport merge_lora_checkpoint(const std::string& base_dir, const std::string& adapter,
                                 const std::string& out_dir, const std::string& dtype_text) {
  const LoadedModel base = load_model(base_dir);
  LoraReport report;
  const LoadedModel merged = merge_lora(base, adapter, &report);

  std::string dtype = dtype_text;
  if (dtype == "auto") {
    std::ifstream in((fs::path(base_dir) / "config.json").string(), std::ios::binary);
    const json j = json::parse(in, nullptr, false);
    const std::string td = j.is_object() ? j.value("torch_dtype", "float32") : "float32";
    dtype = td == "bfloat16" ? "bf16" : td == "float16" ? "f16" : "f32";
  }
  const WeightDtype wd = parse_weight_dtype(dtype, "--dtype");
  std::vector<std::string> copy;
  for (const auto& e : fs::directory_iterator(base_dir)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name == "config.json" || e.path().extension() == ".safetensors" ||
        name == "model.safetensors.index.json") {
      continue;
    }
    copy.push_back(e.path().string());
  }
  write_checkpoint(out_dir, *merged.weights, wd, copy);
  return report;
}

}  // namespace ps
