#include "convert/convert_moe.h"

#include <algorithm>

#include "convert/convert_checkpoint.h"

namespace ps {
namespace {

// How many distinct J appear as "<prefix>J." among the names.
int32_t count_indexed(const std::set<std::string>& names, const std::string& prefix) {
  int32_t n = 0;
  for (const std::string& name : names) {
    if (name.rfind(prefix, 0) != 0) continue;
    const size_t dot = name.find('.', prefix.size());
    if (dot == std::string::npos) continue;
    try {
      n = std::max(n, std::stoi(name.substr(prefix.size(), dot - prefix.size())) + 1);
    } catch (const std::exception&) {
    }
  }
  return n;
}

}  // namespace

bool infer_moe_config(const std::set<std::string>& names, const TensorRows& rows,
                      const ShapeOverrides& given, ModelConfig* c, std::vector<std::string>* notes,
                      std::vector<std::string>* problems) {
  // The first layer with a router: qwen3_moe may keep early layers dense.
  std::string p;
  for (int32_t l = 0; l < c->num_hidden_layers && p.empty(); ++l) {
    const std::string prefix = "model.layers." + std::to_string(l) + ".";
    if (names.count(prefix + "mlp.gate.weight")) p = prefix;
  }
  if (p.empty()) return false;
  const std::string type = given.model_type.value_or("minimind");
  if (type != "minimind" && type != "qwen3_moe") {
    problems->push_back("the tensors hold MoE experts (" + p + "mlp.gate.weight) but model_type " +
                        type + " is dense; use minimind or qwen3_moe");
    return true;
  }
  const bool has_qk_norm = names.count(p + "self_attn.q_norm.weight") > 0;
  c->set_model_type(type);
  if (type == "minimind") c->qk_norm = has_qk_norm;  // MiniMind 3 has q/k norms, MiniMind 2 not
  MoeConfig& m = c->moe;
  m = MoeConfig{};
  m.num_experts = rows(p + "mlp.gate.weight", 0).value_or(0);
  m.moe_intermediate_size = rows(p + "mlp.experts.0.gate_proj.weight", 0).value_or(0);
  m.num_shared_experts = count_indexed(names, p + "mlp.shared_experts.");
  const int32_t stored = count_indexed(names, p + "mlp.experts.");
  if (stored != m.num_experts) {
    problems->push_back(p + "mlp.gate.weight routes to " + std::to_string(m.num_experts) +
                        " experts but " + std::to_string(stored) + " are stored");
  }
  const bool v2 = type == "minimind" && !has_qk_norm;
  if (given.num_experts_per_tok) {
    m.num_experts_per_tok = *given.num_experts_per_tok;
  } else {
    // What MiniMind's own config would assume (its --use_moe models train with the default).
    m.num_experts_per_tok = v2 ? 2 : 1;
    notes->push_back("num_experts_per_tok " + std::to_string(m.num_experts_per_tok) +
                     " (MiniMind " + (v2 ? "2" : "3") +
                     "'s default; pass --num-experts-per-tok or a config file if the model was "
                     "trained otherwise)");
  }
  if (type == "qwen3_moe") {
    m.norm_topk_prob = given.norm_topk_prob.value_or(false);
    for (int32_t l = 0; l < c->num_hidden_layers; ++l) {  // layers without a router stay dense
      if (!names.count("model.layers." + std::to_string(l) + ".mlp.gate.weight")) {
        m.mlp_only_layers.push_back(l);
      }
    }
    if (m.num_shared_experts > 0) {
      problems->push_back("qwen3_moe has no shared experts, but " + p +
                          "mlp.shared_experts.* are stored");
    }
  } else {
    m.norm_topk_prob = given.norm_topk_prob.value_or(true);
    m.norm_topk_epsilon = 1e-20f;
    m.norm_topk_only_above_one = v2;
    if (!v2 && m.num_shared_experts > 0) {
      problems->push_back("MiniMind 3 (q/k norms) has no shared experts, but " + p +
                          "mlp.shared_experts.* are stored");
    }
  }
  // The dense width: a shared expert's, else (MiniMind 3) the routed experts'.
  if (!given.intermediate_size) {
    const auto shared = rows(p + "mlp.shared_experts.0.gate_proj.weight", 0);
    c->intermediate_size = shared.value_or(m.moe_intermediate_size);
  }
  if (v2 && m.moe_intermediate_size != c->intermediate_size) {
    problems->push_back("MiniMind 2 experts are intermediate_size (" +
                        std::to_string(c->intermediate_size) + ") wide, but " + p +
                        "mlp.experts.0.gate_proj.weight has " +
                        std::to_string(m.moe_intermediate_size) + " rows");
  }
  return true;
}

}  // namespace ps
