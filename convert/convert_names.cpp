#include "convert/convert_names.h"

#include <array>
#include <cctype>
#include <utility>

namespace ps {
namespace {

// Per-layer suffixes: {MiniMind, Hugging Face} (both relative to "layers.N.").
constexpr std::array<std::pair<const char*, const char*>, 14> kLayerNames = {{
    {"attention.wq.weight", "self_attn.q_proj.weight"},
    {"attention.wk.weight", "self_attn.k_proj.weight"},
    {"attention.wv.weight", "self_attn.v_proj.weight"},
    {"attention.wo.weight", "self_attn.o_proj.weight"},
    {"attention.wq.bias", "self_attn.q_proj.bias"},
    {"attention.wk.bias", "self_attn.k_proj.bias"},
    {"attention.wv.bias", "self_attn.v_proj.bias"},
    {"attention.q_norm.weight", "self_attn.q_norm.weight"},
    {"attention.k_norm.weight", "self_attn.k_norm.weight"},
    {"attention_norm.weight", "input_layernorm.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"feed_forward.w1.weight", "mlp.gate_proj.weight"},  // w1: gate
    {"feed_forward.w3.weight", "mlp.up_proj.weight"},    // w3: up
    {"feed_forward.w2.weight", "mlp.down_proj.weight"},  // w2: down
}};

bool starts_with(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& x) {
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

std::string strip_wrappers(std::string n) {
  for (bool again = true; again;) {
    again = false;
    for (const char* p : {"module.", "_orig_mod.", "base_model.model."}) {
      if (starts_with(n, p)) {
        n.erase(0, std::char_traits<char>::length(p));
        again = true;
      }
    }
  }
  return n;
}

// "layers.12.rest" -> (12-as-text, "rest"); empty index when `n` is not a layer name.
std::pair<std::string, std::string> split_layer(const std::string& n) {
  if (!starts_with(n, "layers.")) return {};
  size_t i = 7;
  while (i < n.size() && std::isdigit(static_cast<unsigned char>(n[i]))) ++i;
  if (i == 7 || i >= n.size() || n[i] != '.') return {};
  return {n.substr(7, i - 7), n.substr(i + 1)};
}

// MiniMind 2/3 and HF Qwen3-MoE share these names: mlp.gate.weight (the router),
// mlp.experts.J.{gate,up,down}_proj.weight and mlp.shared_experts.K.{gate,up,down}_proj.weight.
bool is_moe_name(const std::string& rest) {
  if (rest == "mlp.gate.weight") return true;
  for (const char* group : {"mlp.experts.", "mlp.shared_experts."}) {
    if (!starts_with(rest, group)) continue;
    size_t i = std::char_traits<char>::length(group);
    const size_t digits = i;
    while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
    if (i == digits || i >= rest.size() || rest[i] != '.') return false;
    const std::string proj = rest.substr(i + 1);
    return proj == "gate_proj.weight" || proj == "up_proj.weight" || proj == "down_proj.weight";
  }
  return false;
}

}  // namespace

MappedName map_tensor_name(const std::string& name) {
  std::string n = strip_wrappers(name);
  for (const char* buffer : {"inv_freq", "freqs_cis", "pos_cis", "freqs_cos", "freqs_sin"}) {
    if (ends_with(n, buffer)) return {MappedName::Kind::kIgnored, ""};
  }
  if (ends_with(n, "attention.mask") || n == "mask") return {MappedName::Kind::kIgnored, ""};
  if (n == "lm_head.weight" || n == "output.weight")
    return {MappedName::Kind::kWeight, "lm_head.weight"};
  if (starts_with(n, "model.")) n.erase(0, 6);
  if (n == "embed_tokens.weight" || n == "tok_embeddings.weight") {
    return {MappedName::Kind::kWeight, "model.embed_tokens.weight"};
  }
  if (n == "norm.weight") return {MappedName::Kind::kWeight, "model.norm.weight"};
  const auto [layer, rest] = split_layer(n);
  if (layer.empty()) return {};
  const std::string prefix = "model.layers." + layer + ".";
  for (const auto& [mini, hf] : kLayerNames) {
    if (rest == mini || rest == hf) return {MappedName::Kind::kWeight, prefix + hf};
  }
  if (is_moe_name(rest)) return {MappedName::Kind::kWeight, prefix + rest};
  return {};
}

std::string minimind_name(const std::string& hf) {
  if (hf == "model.embed_tokens.weight") return "tok_embeddings.weight";
  if (hf == "model.norm.weight") return "norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  if (!starts_with(hf, "model.")) return hf;
  const auto [layer, rest] = split_layer(hf.substr(6));
  if (layer.empty()) return hf;
  for (const auto& [mini, h] : kLayerNames) {
    if (rest == h) return "layers." + layer + "." + mini;
  }
  return hf;
}

}  // namespace ps
