#include "model/fused_projections.h"

namespace ps {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::optional<FusedSlice> fused_slice_of(const ModelConfig& c, const std::string& slot_name) {
  if (c.model_type != "phi3") return std::nullopt;
  const int64_t q = c.q_size(), kv = c.kv_size(), inter = c.intermediate_size;
  struct Part {
    const char* tail;   // the slot's name after "model.layers.N."
    const char* fused;  // the stored tensor's, same prefix
    int64_t rows, begin;
  };
  const Part parts[] = {
      {"self_attn.q_proj.weight", "self_attn.qkv_proj.weight", q + 2 * kv, 0},
      {"self_attn.k_proj.weight", "self_attn.qkv_proj.weight", q + 2 * kv, q},
      {"self_attn.v_proj.weight", "self_attn.qkv_proj.weight", q + 2 * kv, q + kv},
      {"mlp.gate_proj.weight", "mlp.gate_up_proj.weight", 2 * inter, 0},
      {"mlp.up_proj.weight", "mlp.gate_up_proj.weight", 2 * inter, inter},
  };
  for (const Part& p : parts) {
    if (!slot_name.starts_with("model.layers.") || !ends_with(slot_name, p.tail)) continue;
    const std::string prefix = slot_name.substr(0, slot_name.size() - std::string(p.tail).size());
    return FusedSlice{prefix + p.fused, p.rows, p.begin};
  }
  return std::nullopt;
}

}  // namespace ps
