#include "model/moe_weights.h"

#include "model/model_weights.h"

namespace ps {
namespace {

void append_expert(const std::string& name, int64_t hidden, int64_t width, ExpertWeights& e,
                   std::vector<WeightSlot>* slots) {
  slots->push_back({name + ".gate_proj.weight", {width, hidden}, &e.gate_proj});
  slots->push_back({name + ".up_proj.weight", {width, hidden}, &e.up_proj});
  slots->push_back({name + ".down_proj.weight", {hidden, width}, &e.down_proj});
}

}  // namespace

void append_moe_slots(const ModelConfig& c, const std::string& prefix, MoeLayerWeights& w,
                      std::vector<WeightSlot>* slots) {
  const int64_t hidden = c.hidden_size;
  w.experts.resize(static_cast<size_t>(c.moe.num_experts));
  w.shared.resize(static_cast<size_t>(c.moe.num_shared_experts));
  slots->push_back({prefix + "mlp.gate.weight", {c.moe.num_experts, hidden}, &w.router});
  for (size_t j = 0; j < w.experts.size(); ++j) {
    append_expert(prefix + "mlp.experts." + std::to_string(j), hidden, c.moe.moe_intermediate_size,
                  w.experts[j], slots);
  }
  for (size_t k = 0; k < w.shared.size(); ++k) {
    append_expert(prefix + "mlp.shared_experts." + std::to_string(k), hidden, c.intermediate_size,
                  w.shared[k], slots);
  }
}

}  // namespace ps
