#include "convert/lora_reader.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "checkpoint/safetensors_reader.h"
#include "convert/convert_names.h"
#include "convert/convert_pth_reader.h"
#include "model/model_weights.h"
#include "model/shape_string.h"

namespace ps {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

NamedTensors read_safetensors_tensors(const std::string& path) {
  const SafetensorsFile f = SafetensorsFile::open(path);
  NamedTensors out;
  for (const SafetensorsTensor& t : f.header().tensors) {
    DType st;
    switch (t.dtype) {
      case SafetensorsDtype::kF32:
        st = DType::f32;
        break;
      case SafetensorsDtype::kBF16:
        st = DType::bf16;
        break;
      case SafetensorsDtype::kF16:
        st = DType::f16;
        break;
      case SafetensorsDtype::kF64:
        st = DType::f64;
        break;
      default:
        throw std::runtime_error(path + ": tensor '" + t.name + "' has dtype " +
                                 dtype_name(t.dtype) + "; LoRA weights must be F32, BF16 or F16");
    }
    Tensor x = Tensor::empty(t.shape, st);
    const std::span<const uint8_t> bytes = f.bytes(t);
    if (!bytes.empty()) std::memcpy(x.data_ptr(), bytes.data(), bytes.size());
    out.emplace_back(t.name, x);
  }
  return out;
}

struct AdapterFiles {
  std::string tensors;  // the file holding lora_A / lora_B
  std::string config;   // adapter_config.json, or empty
};

AdapterFiles locate(const std::string& adapter) {
  const fs::path p(adapter);
  AdapterFiles a;
  if (fs::is_directory(p)) {
    if (!fs::exists(p / "adapter_config.json")) {
      throw std::runtime_error(adapter +
                               ": no adapter_config.json (a PEFT adapter directory "
                               "holds adapter_config.json and adapter_model.safetensors)");
    }
    a.config = (p / "adapter_config.json").string();
    for (const char* f : {"adapter_model.safetensors", "adapter_model.bin", "adapter_model.pth"}) {
      if (fs::exists(p / f)) {
        a.tensors = (p / f).string();
        return a;
      }
    }
    throw std::runtime_error(adapter + ": no adapter_model.safetensors (or adapter_model.bin)");
  }
  if (!fs::is_regular_file(p)) throw std::runtime_error(adapter + ": no such file or directory");
  a.tensors = adapter;
  const fs::path beside =
      (p.has_parent_path() ? p.parent_path() : fs::path(".")) / "adapter_config.json";
  if (fs::exists(beside)) a.config = beside.string();
  return a;
}

struct Pair {
  Tensor a, b;
  std::string a_name, b_name;
};

// "x.lora_A.weight", "x.lora_A.default.weight", "x.lora.A.weight" -> ("x", 'A').
bool split_lora_name(const std::string& name, std::string* module, char* which) {
  for (const char* tag : {".lora_A.", ".lora_B.", ".lora.A.", ".lora.B."}) {
    const size_t at = name.find(tag);
    if (at == std::string::npos) continue;
    const std::string rest = name.substr(at + std::strlen(tag));
    if (rest != "weight" && !(rest.size() > 7 && rest.compare(rest.size() - 7, 7, ".weight") == 0 &&
                              rest.find('.') == rest.size() - 7)) {
      return false;
    }
    *module = name.substr(0, at);
    *which = tag[std::strlen(tag) - 2];
    return true;
  }
  return false;
}

}  // namespace

LoraFile read_lora_adapter(const ModelConfig& base, const std::string& adapter, int32_t max_rank) {
  const AdapterFiles files = locate(adapter);
  const std::string& origin = files.tensors;
  auto fail = [&](const std::string& msg) -> void {
    throw std::runtime_error(origin + ": " + msg);
  };

  std::optional<int32_t> config_r;
  std::optional<double> alpha;
  bool rslora = false;
  if (!files.config.empty()) {
    std::ifstream in(files.config, std::ios::binary);
    json j;
    try {
      j = json::parse(in);
    } catch (const json::exception& e) {
      throw std::runtime_error(files.config + ": invalid JSON: " + e.what());
    }
    auto bad = [&](const std::string& msg) { throw std::runtime_error(files.config + ": " + msg); };
    if (!j.is_object()) bad("expected a JSON object");
    if (j.contains("r")) {
      if (!j.at("r").is_number_integer() || j.at("r").get<int64_t>() <= 0)
        bad("\"r\" must be a positive integer");
      config_r = j.at("r").get<int32_t>();
    }
    if (j.contains("lora_alpha") && !j.at("lora_alpha").is_null()) {
      if (!j.at("lora_alpha").is_number()) bad("\"lora_alpha\" must be a number");
      alpha = j.at("lora_alpha").get<double>();
    }
    rslora = j.value("use_rslora", false);
    if (j.value("use_dora", false)) bad("use_dora adapters are not supported (only plain LoRA)");
    if (j.value("fan_in_fan_out", false)) bad("fan_in_fan_out adapters are not supported");
    for (const char* k : {"rank_pattern", "alpha_pattern"}) {
      if (j.contains(k) && j.at(k).is_object() && !j.at(k).empty()) {
        bad(std::string("\"") + k + "\" (per-module ranks) is not supported");
      }
    }
  }

  const bool is_safetensors = fs::path(origin).extension() == ".safetensors";
  const NamedTensors tensors =
      is_safetensors ? read_safetensors_tensors(origin) : read_torch_state_dict(origin);

  std::map<std::string, Pair> pairs;  // by Hugging Face weight name
  for (const auto& [name, t] : tensors) {
    std::string module;
    char which = 0;
    if (!split_lora_name(name, &module, &which)) {
      fail("tensor '" + name +
           "' is not a lora_A / lora_B weight (LoRA biases, embedding "
           "adapters and modules_to_save are not supported)");
    }
    const MappedName m = map_tensor_name(module + ".weight");
    if (m.kind != MappedName::Kind::kWeight || m.hf.find("norm") != std::string::npos ||
        m.hf == "model.embed_tokens.weight") {
      fail("tensor '" + name + "' adapts '" + module +
           "', which is not a linear layer of the model");
    }
    if (t.dim() != 2)
      fail("tensor '" + name + "' must be 2-D, got shape " + shape_string(t.sizes()));
    Pair& p = pairs[m.hf];
    const DType dt = t.dtype();
    if (dt != DType::f32 && dt != DType::bf16 && dt != DType::f16 && dt != DType::f64) {
      fail("tensor '" + name + "' is " + dtype_name(dt) + "; LoRA weights must be floating point");
    }
    (which == 'A' ? p.a : p.b) = t.to(DType::f32);
    (which == 'A' ? p.a_name : p.b_name) = name;
  }
  if (pairs.empty()) fail("no lora_A / lora_B tensors");

  // The shapes the base's config implies (no tensors needed), plus the head even when tied.
  ModelWeights shapes;
  shapes.config = base;
  std::map<std::string, std::vector<int64_t>> linear;
  for (const WeightSlot& s : weight_slots(shapes)) linear[s.name] = s.shape;
  linear["lm_head.weight"] = {base.vocab_size, base.hidden_size};

  LoraFile out;
  LoraReport& r = out.report;
  r.source = origin;
  for (const auto& [hf, p] : pairs) {
    if (!p.a.defined()) fail("'" + p.b_name + "' has no matching lora_A tensor");
    if (!p.b.defined()) fail("'" + p.a_name + "' has no matching lora_B tensor");
    const auto it = linear.find(hf);
    if (it == linear.end()) {
      fail("'" + p.a_name + "' adapts " + hf + ", which this " + base.model_type + " model with " +
           std::to_string(base.num_hidden_layers) + " layers does not have");
    }
    const int64_t rank = p.a.size(0);
    if (rank <= 0 || p.b.size(1) != rank) {
      fail("bad rank: '" + p.a_name + "' is " + shape_string(p.a.sizes()) + " (rank first) but '" +
           p.b_name + "' is " + shape_string(p.b.sizes()) + " (rank last)");
    }
    if (config_r && rank != *config_r) {
      fail("bad rank: '" + p.a_name + "' has rank " + std::to_string(rank) + " but " +
           files.config + " says r = " + std::to_string(*config_r));
    }
    if (r.rank != 0 && r.rank != rank) {
      fail("bad rank: '" + p.a_name + "' has rank " + std::to_string(rank) +
           " but other modules have rank " + std::to_string(r.rank));
    }
    if (max_rank > 0 && rank > max_rank) {
      fail("rank " + std::to_string(rank) + " of '" + p.a_name + "' is over --max-lora-rank " +
           std::to_string(max_rank) + "; raise --max-lora-rank");
    }
    const std::vector<int64_t>& w = it->second;
    if (p.a.size(1) != w[1] || p.b.size(0) != w[0]) {
      fail("'" + p.a_name + "' " + shape_string(p.a.sizes()) + " and '" + p.b_name + "' " +
           shape_string(p.b.sizes()) + " do not fit " + hf + " " + shape_string(w) +
           " (expected [r, " + std::to_string(w[1]) + "] and [" + std::to_string(w[0]) + ", r])");
    }
    r.rank = static_cast<int32_t>(rank);
    const double a = alpha.value_or(static_cast<double>(rank));
    const double scale = rslora ? a / std::sqrt(static_cast<double>(rank)) : a / rank;
    r.alpha = static_cast<float>(a);
    r.scale = static_cast<float>(scale);
    out.scale = scale;
    r.modules.push_back(hf);
    out.modules.push_back(LoraFactors{hf, p.a, p.b, p.a_name, p.b_name});
  }
  return out;
}

}  // namespace ps
