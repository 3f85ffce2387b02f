#include "model/rope_layers.h"

#include "model/config_json.h"
#include "model/model_config.h"

namespace ps {

using config_json::fail;
using config_json::has;

void read_rope_layers(const nlohmann::json& j, const std::string& origin, ModelConfig* c) {
  const auto layers = static_cast<size_t>(std::max(0, c->num_hidden_layers));
  c->rope_layers.assign(layers, 1);
  if (has(j, "use_sliding_window") && j.at("use_sliding_window") == true) {
    fail(origin, "use_sliding_window true is not supported for smollm3 (no sliding-window mask)");
  }
  if (has(j, "no_rope_layers")) {
    const nlohmann::json& list = j.at("no_rope_layers");
    if (!list.is_array() || list.size() < layers) {
      fail(origin, "no_rope_layers must be a list of at least num_hidden_layers (" +
                       std::to_string(layers) + ") entries of 0 or 1");
    }
    for (size_t i = 0; i < layers; ++i) {
      const nlohmann::json& v = list[i];
      if (!v.is_number_integer() || (v != 0 && v != 1)) {
        fail(origin, "no_rope_layers[" + std::to_string(i) + "] is " + v.dump() +
                         "; each entry is 1 (the layer applies RoPE) or 0 (a NoPE layer)");
      }
      c->rope_layers[i] = static_cast<uint8_t>(v.get<int>());
    }
    return;
  }
  int interval = 4;
  if (has(j, "no_rope_layer_interval")) {
    const nlohmann::json& v = j.at("no_rope_layer_interval");
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      fail(origin, "no_rope_layer_interval must be a positive integer, got " + v.dump());
    }
    interval = static_cast<int>(std::min<int64_t>(v.get<int64_t>(), 1 << 20));
  }
  for (size_t i = 0; i < layers; ++i) c->rope_layers[i] = (i + 1) % size_t(interval) != 0;
}

void validate_rope_layers(const ModelConfig& c, const std::string& origin) {
  if (c.rope_layers.empty()) return;
  if (c.model_type != "smollm3") {
    fail(origin, "per-layer RoPE (no_rope_layers) is only read for model_type smollm3, not " +
                     c.model_type);
  }
  if (c.rope_layers.size() != static_cast<size_t>(c.num_hidden_layers)) {
    fail(origin, "no_rope_layers has " + std::to_string(c.rope_layers.size()) + " entries for " +
                     std::to_string(c.num_hidden_layers) + " layers");
  }
  for (uint8_t v : c.rope_layers) {
    if (v > 1) fail(origin, "no_rope_layers entries are 0 or 1");
  }
}

void write_rope_layers(const ModelConfig& c, nlohmann::json* j) {
  if (c.model_type != "smollm3") return;
  nlohmann::json list = nlohmann::json::array();
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) list.push_back(c.layer_uses_rope(l) ? 1 : 0);
  (*j)["no_rope_layers"] = std::move(list);
}

}  // namespace ps
