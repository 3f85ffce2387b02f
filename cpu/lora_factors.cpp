#include "cpu/lora_factors.h"

#include <map>
#include <stdexcept>
#include <utility>

namespace ps {
namespace {

// Where a Hugging Face weight's output lands in the runner: layer (-1: the head), site, and the
// first column of its range in the fused product.
struct Target {
  int64_t layer = -1;
  LoraSite site = LoraSite::kQkv;
  int64_t col = 0;
};

Target target_of(const std::string& hf, const ModelConfig& c) {
  if (hf == "lm_head.weight") return Target{};
  const std::string prefix = "model.layers.";
  if (hf.rfind(prefix, 0) == 0) {
    size_t used = 0;
    const int64_t layer = std::stoll(hf.substr(prefix.size()), &used);
    const std::string rest = hf.substr(prefix.size() + used);
    const int64_t q = c.q_size(), kv = c.kv_size(), inter = c.intermediate_size;
    static const std::map<std::string, std::pair<LoraSite, int>> kSites = {
        {".self_attn.q_proj.weight", {LoraSite::kQkv, 0}},
        {".self_attn.k_proj.weight", {LoraSite::kQkv, 1}},
        {".self_attn.v_proj.weight", {LoraSite::kQkv, 2}},
        {".self_attn.o_proj.weight", {LoraSite::kOProj, 0}},
        {".mlp.gate_proj.weight", {LoraSite::kGateUp, 0}},
        {".mlp.up_proj.weight", {LoraSite::kGateUp, 1}},
        {".mlp.down_proj.weight", {LoraSite::kDown, 0}},
    };
    const auto it = kSites.find(rest);
    if (it != kSites.end() && layer >= 0 && layer < c.num_hidden_layers) {
      const auto [site, part] = it->second;
      int64_t col = 0;
      if (site == LoraSite::kQkv) col = part == 0 ? 0 : part == 1 ? q : q + kv;
      if (site == LoraSite::kGateUp) col = part == 0 ? 0 : inter;
      return Target{layer, site, col};
    }
  }
  throw std::invalid_argument("LoRA: the runner has no projection for " + hf);
}

}  // namespace

std::shared_ptr<const LoraAdapter> pack_lora_adapter(const ModelConfig& config,
                                                     std::span<const LoraFactors> modules,
                                                     double scale, LoraAdapterInfo info) {
  // Gather each site's modules first, then stack their A's in column order.
  struct Pending {
    std::vector<const LoraFactors*> modules;
    std::vector<int64_t> cols;
  };
  std::vector<std::array<Pending, kLoraSitesPerLayer>> layers(
      static_cast<size_t>(config.num_hidden_layers));
  Pending head;
  for (const LoraFactors& m : modules) {
    const Target t = target_of(m.hf_name, config);
    Pending& p = t.layer < 0 ? head : layers[size_t(t.layer)][size_t(t.site)];
    p.modules.push_back(&m);
    p.cols.push_back(t.col);
  }
  auto build = [&](const Pending& p) {
    LoraSiteFactors f;
    if (p.modules.empty()) return f;
    std::vector<Tensor> as;
    int64_t r_begin = 0;
    for (size_t i = 0; i < p.modules.size(); ++i) {
      const LoraFactors& m = *p.modules[i];
      as.push_back(m.a.to(DType::f32));
      LoraSiteFactors::Part part;
      part.col = p.cols[i];
      part.r_begin = r_begin;
      part.rank = m.a.size(0);
      Tensor b = m.b.to(DType::f32).clone();
      float* bp = b.data_ptr<float>();
      const float s = float(scale);  // as torch scales a float tensor by a Python float
      for (int64_t i = 0; i < b.numel(); ++i) bp[i] *= s;
      part.b = PackedWeight(b.data_ptr<float>(), b.size(0), b.size(1));
      r_begin += part.rank;
      f.parts.push_back(std::move(part));
    }
    const Tensor a = cat_rows(as);
    f.a = PackedWeight(a.data_ptr<float>(), a.size(0), a.size(1));
    return f;
  };
  auto packed = std::make_shared<LoraPacked>();
  packed->layers.resize(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    for (size_t s = 0; s < kLoraSitesPerLayer; ++s) packed->layers[l][s] = build(layers[l][s]);
  }
  packed->lm_head = build(head);
  auto adapter = std::make_shared<LoraAdapter>();
  adapter->info = std::move(info);
  adapter->packed = std::move(packed);
  return adapter;
}

}  // namespace ps
