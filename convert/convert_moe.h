#pragma once
// The MoE part of `pagedserve convert`: a state_dict whose layers hold a router
// (layers.N.mlp.gate.weight) and experts (mlp.experts.J.*, mlp.shared_experts.K.*), as MiniMind
// trains with --use_moe, becomes MiniMind's own format (model_type "minimind", use_moe true), or
// qwen3_moe when the config file says so. Torch-free so the rules are unit-tested without
// tensors.
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace ps {

struct ShapeOverrides;

// rows(hf_name, dim): that tensor's size along dim, or nullopt when absent.
using TensorRows = std::function<std::optional<int32_t>(const std::string&, int)>;

// True when the (Hugging Face-named) tensors hold experts. Then sets c's model type, q/k norm
// flag and MoE fields from `given` where it speaks, else from the tensors, else MiniMind's
// defaults (each such default is described in *notes). Problems (experts with a dense
// model_type, a count the tensors contradict) go to *problems.
bool infer_moe_config(const std::set<std::string>& names, const TensorRows& rows,
                      const ShapeOverrides& given, ModelConfig* c, std::vector<std::string>* notes,
                      std::vector<std::string>* problems);

}  // namespace ps
