#include "model/fused_projections.h"

#include <cstdlib>

namespace ps {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "model.layers.N." when `slot_name` is that prefix followed by `tail`.
std::optional<std::string> layer_prefix(const std::string& slot_name, const std::string& tail) {
  if (!slot_name.starts_with("model.layers.") || !ends_with(slot_name, tail)) return std::nullopt;
  return slot_name.substr(0, slot_name.size() - tail.size());
}

std::optional<FusedSlice> phi3_slice(const ModelConfig& c, const std::string& slot_name) {
  const int64_t q = c.q_size(), kv = c.kv_size(), inter = c.intermediate_size;
  const int64_t hidden = c.hidden_size;
  struct Part {
    const char* tail;   // the slot's name after "model.layers.N."
    const char* fused;  // the stored tensor's, same prefix
    int64_t rows, begin, count;
  };
  const Part parts[] = {
      {"self_attn.q_proj.weight", "self_attn.qkv_proj.weight", q + 2 * kv, 0, q},
      {"self_attn.k_proj.weight", "self_attn.qkv_proj.weight", q + 2 * kv, q, kv},
      {"self_attn.v_proj.weight", "self_attn.qkv_proj.weight", q + 2 * kv, q + kv, kv},
      {"mlp.gate_proj.weight", "mlp.gate_up_proj.weight", 2 * inter, 0, inter},
      {"mlp.up_proj.weight", "mlp.gate_up_proj.weight", 2 * inter, inter, inter},
  };
  for (const Part& p : parts) {
    if (const auto prefix = layer_prefix(slot_name, p.tail)) {
      return FusedSlice{*prefix + p.fused, {p.rows, hidden}, {{p.begin, p.count}}};
    }
  }
  return std::nullopt;
}

// Qwen3-Next's per-key-head groups: group g of in_proj_qkvz is [q_g | k_g | v_g | z_g] (dk, dk,
// r dv, r dv rows, r value heads per key head), of in_proj_ba [b_g | a_g] (r, r rows).
std::optional<FusedSlice> qwen3_next_slice(const ModelConfig& c, const std::string& slot_name) {
  const LinearAttentionShape& s = c.linear;
  const int64_t hk = s.num_key_heads, dk = s.key_head_dim, hidden = c.hidden_size;
  const int64_t r = s.num_value_heads / s.num_key_heads, rv = r * s.value_head_dim;
  const int64_t group = 2 * dk + 2 * rv;
  // Each part: the stored tensor, its group height, and the runs (offset in a group, rows) the
  // slot takes from every group, one pass over the groups per run.
  struct Part {
    const char* tail;
    const char* fused;
    int64_t group_rows;
    std::vector<std::pair<int64_t, int64_t>> per_group;
  };
  const Part parts[] = {
      {"linear_attn.in_proj_qkv.weight",
       "linear_attn.in_proj_qkvz.weight",
       group,
       {{0, dk}, {dk, dk}, {2 * dk, rv}}},
      {"linear_attn.in_proj_z.weight",
       "linear_attn.in_proj_qkvz.weight",
       group,
       {{2 * dk + rv, rv}}},
      {"linear_attn.in_proj_b.weight", "linear_attn.in_proj_ba.weight", 2 * r, {{0, r}}},
      {"linear_attn.in_proj_a.weight", "linear_attn.in_proj_ba.weight", 2 * r, {{r, r}}},
  };
  for (const Part& p : parts) {
    const auto prefix = layer_prefix(slot_name, p.tail);
    if (!prefix) continue;
    FusedSlice f{*prefix + p.fused, {hk * p.group_rows, hidden}, {}};
    for (const auto& [offset, rows] : p.per_group) {
      for (int64_t g = 0; g < hk; ++g) f.row_runs.push_back({g * p.group_rows + offset, rows});
    }
    return f;
  }
  return std::nullopt;
}

// Qwen3.5-MoE's stacked experts: slot "model.layers.N.mlp.experts.J.<proj>.weight".
std::optional<FusedSlice> stacked_expert_slice(const ModelConfig& c, const std::string& slot_name) {
  const std::string marker = ".mlp.experts.";
  const size_t at = slot_name.find(marker);
  if (!slot_name.starts_with("model.layers.") || at == std::string::npos) return std::nullopt;
  const std::string prefix = slot_name.substr(0, at + marker.size());  // "...mlp.experts."
  const size_t dot = slot_name.find('.', prefix.size());
  if (dot == std::string::npos) return std::nullopt;
  const int64_t j = std::strtoll(slot_name.c_str() + prefix.size(), nullptr, 10);
  const std::string proj = slot_name.substr(dot + 1);
  const int64_t E = c.moe.num_experts, I = c.moe.moe_intermediate_size, H = c.hidden_size;
  if (proj == "gate_proj.weight" || proj == "up_proj.weight") {
    const int64_t begin = j * 2 * I + (proj == "up_proj.weight" ? I : 0);
    return FusedSlice{prefix + "gate_up_proj", {E, 2 * I, H}, {{begin, I}}};
  }
  if (proj == "down_proj.weight") return FusedSlice{prefix + "down_proj", {E, H, I}, {{j * H, H}}};
  return std::nullopt;
}

}  // namespace

int64_t FusedSlice::stored_rows() const {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < stored_shape.size(); ++d) rows *= stored_shape[d];
  return rows;
}

std::optional<FusedSlice> fused_slice_of(const ModelConfig& c, const std::string& slot_name) {
  if (c.model_type == "phi3") return phi3_slice(c, slot_name);
  if (c.model_type == "qwen3_next") return qwen3_next_slice(c, slot_name);
  if (c.model_type == "qwen3_5_moe_text") return stacked_expert_slice(c, slot_name);
  return std::nullopt;
}

}  // namespace ps
