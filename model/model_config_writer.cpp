// ModelConfig::to_json: the config.json a ModelConfig is written as (make-tiny-model, convert),
// each family's own fields added by its reader's writer. Split from model_config.cpp, which reads.
#include <charconv>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "model/gpt_oss_config.h"
#include "model/layer_types.h"
#include "model/linear_attention_config.h"
#include "model/model_config.h"
#include "model/rope_layers.h"

namespace ps {
namespace {

using json = nlohmann::json;

// A float written as its shortest decimal (1e-06, not 9.999999974752427e-07).
json shortest(float f) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), f);
  return json(std::strtod(std::string(buf, res.ptr).c_str(), nullptr));
}

const char* architecture_of(const std::string& type) {
  if (type == "qwen3") return "Qwen3ForCausalLM";
  if (type == "qwen3_moe") return "Qwen3MoeForCausalLM";
  if (type == "minimind") return "MiniMindForCausalLM";
  if (type == "qwen2") return "Qwen2ForCausalLM";
  if (type == "mistral") return "MistralForCausalLM";
  if (type == "smollm3") return "SmolLM3ForCausalLM";
  if (type == "phi3") return "Phi3ForCausalLM";
  if (type == "gemma3_text") return "Gemma3ForCausalLM";
  if (type == "gemma2") return "Gemma2ForCausalLM";
  if (type == "gpt_oss") return "GptOssForCausalLM";
  if (type == "qwen3_5_text") return "Qwen3_5ForCausalLM";
  if (type == "qwen3_5_moe_text") return "Qwen3_5MoeForCausalLM";
  if (type == "qwen3_next") return "Qwen3NextForCausalLM";
  return "LlamaForCausalLM";
}

}  // namespace

std::string ModelConfig::to_json() const {
  json j;
  j["architectures"] = {architecture_of(model_type)};
  j["model_type"] = model_type;
  j["hidden_size"] = hidden_size;
  j["num_hidden_layers"] = num_hidden_layers;
  j["num_attention_heads"] = num_attention_heads;
  j["num_key_value_heads"] = num_key_value_heads;
  j["head_dim"] = head_dim;
  j["intermediate_size"] = intermediate_size;
  j["vocab_size"] = vocab_size;
  j["max_position_embeddings"] = max_position_embeddings;
  j["rope_theta"] = shortest(rope_theta);
  j["rms_norm_eps"] = shortest(rms_norm_eps);
  j["rope_scaling"] = rope_scaling_to_json(rope_scaling);
  if (rope_scaling.type == RopeType::longrope && rope_scaling.original_max_position_embeddings) {
    // Where Phi-3 and transformers v4's LongRoPE read it.
    j["rope_scaling"].erase("original_max_position_embeddings");
    j["original_max_position_embeddings"] = *rope_scaling.original_max_position_embeddings;
  }
  if (partial_rotary_factor != 1.0f) j["partial_rotary_factor"] = shortest(partial_rotary_factor);
  j["hidden_act"] = "silu";
  j["tie_word_embeddings"] = tie_word_embeddings;
  if (model_type != "qwen2") j["attention_bias"] = false;  // gpt_oss: true, below
  if (model_type == "qwen2" || model_type.starts_with("qwen3") || model_type == "smollm3") {
    j["use_sliding_window"] = false;
  }
  if (model_type == "mistral" || model_type == "phi3") j["sliding_window"] = nullptr;
  write_rope_layers(*this, &j);
  write_gemma3_fields(*this, &j);
  write_gpt_oss_fields(*this, &j);
  write_linear_attention_fields(*this, &j);
  if (!eos_token_ids.empty()) {
    j["eos_token_id"] = eos_token_ids.size() == 1 ? json(eos_token_ids[0]) : json(eos_token_ids);
  }
  if (bos_token_id >= 0) j["bos_token_id"] = bos_token_id;
  write_moe_fields(*this, &j);
  j["torch_dtype"] = "float32";
  j["initializer_range"] = 0.02;
  j["use_cache"] = true;
  return j.dump(2) + "\n";
}

}  // namespace ps
