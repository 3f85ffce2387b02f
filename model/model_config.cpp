#include "model/model_config.h"
#include "model/config_json.h"
#include "model/gpt_oss_config.h"
#include "model/layer_types.h"
#include "model/linear_attention_config.h"
#include "model/rope_layers.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ps {
namespace {

using json = nlohmann::json;

using config_json::fail;

json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    json j = json::parse(text);
    if (!j.is_object()) fail(origin, "expected a JSON object at the top level");
    return j;
  } catch (const json::exception& e) {
    fail(origin, std::string("invalid JSON: ") + e.what());
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using config_json::has;

// Integers in HF configs are sometimes written as 4096.0; accept any integral number.
int32_t as_int(const json& v, const char* key, const std::string& origin) {
  if (v.is_number_integer()) {
    const auto x = v.get<int64_t>();
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
      fail(origin, std::string("field \"") + key + "\" is out of range: " + v.dump());
    }
    return static_cast<int32_t>(x);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 2147483647.0) {
      return static_cast<int32_t>(d);
    }
  }
  fail(origin, std::string("field \"") + key + "\" must be an integer, got " + v.dump());
}

int32_t get_int(const json& j, const char* key, std::optional<int32_t> fallback,
                const std::string& origin) {
  if (!has(j, key)) {
    if (!fallback) fail(origin, std::string("missing required field \"") + key + "\"");
    return *fallback;
  }
  return as_int(j.at(key), key, origin);
}

float get_float(const json& j, const char* key, float fallback, const std::string& origin) {
  if (!has(j, key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number()) fail(origin, std::string("field \"") + key + "\" must be a number");
  return static_cast<float>(v.get<double>());
}

std::optional<bool> get_bool(const json& j, const char* key, const std::string& origin) {
  if (!has(j, key)) return std::nullopt;
  const json& v = j.at(key);
  if (!v.is_boolean()) fail(origin, std::string("field \"") + key + "\" must be true or false");
  return v.get<bool>();
}

// eos_token_id / bos_token_id: an integer or a list of integers.
std::vector<int32_t> get_id_list(const json& j, const char* key, const std::string& origin) {
  std::vector<int32_t> ids;
  if (!has(j, key)) return ids;
  const json& v = j.at(key);
  if (v.is_array()) {
    for (const json& e : v) ids.push_back(as_int(e, key, origin));
  } else {
    ids.push_back(as_int(v, key, origin));
  }
  return ids;
}

constexpr const char* kSupportedTypes =
    "qwen3, qwen2, llama, mistral, qwen3_moe, minimind, smollm3, phi3, gemma3, gemma3_text, "
    "gemma2, gpt_oss, qwen3_5, qwen3_5_text, qwen3_5_moe, qwen3_5_moe_text, qwen3_next";

bool known_model_type(const std::string& type) {
  return type == "qwen3" || type == "qwen2" || type == "llama" || type == "mistral" ||
         type == "qwen3_moe" || type == "minimind" || type == "smollm3" || type == "phi3" ||
         type == "gemma3_text" || type == "gemma2" || type == "gpt_oss" ||
         ModelConfig::is_hybrid_model_type(type);
}

// The families whose attention RMS-normalises each q and k head. MiniMind 3 does and MiniMind 2
// does not: from_json sets qk_norm for minimind from the config's generation (moe_config.h).
bool has_qk_norm(const std::string& type) {
  return type == "qwen3" || type == "qwen3_moe" || type == "minimind" || type == "gemma3_text" ||
         ModelConfig::is_hybrid_model_type(type);
}

}  // namespace

float ModelConfig::attention_scale() const {
  const float d = query_pre_attn_scalar > 0 ? query_pre_attn_scalar : float(head_dim);
  return 1.0f / std::sqrt(d);
}

void ModelConfig::set_model_type(const std::string& type) {
  model_type = type;
  qk_norm = has_qk_norm(type);
  attention_bias = type == "qwen2" || type == "gpt_oss";
}

void ModelConfig::validate(const std::string& origin) const {
  if (!known_model_type(model_type)) {
    fail(origin,
         "model_type \"" + model_type + "\" is not supported (supported: " + kSupportedTypes + ")");
  }
  const std::pair<const char*, int32_t> positive[] = {
      {"hidden_size", hidden_size},
      {"num_hidden_layers", num_hidden_layers},
      {"num_attention_heads", num_attention_heads},
      {"num_key_value_heads", num_key_value_heads},
      {"head_dim", head_dim},
      {"intermediate_size", intermediate_size},
      {"vocab_size", vocab_size},
      {"max_position_embeddings", max_position_embeddings},
  };
  for (const auto& [name, value] : positive) {
    if (value <= 0) {
      fail(origin,
           std::string("field \"") + name + "\" must be positive, got " + std::to_string(value));
    }
  }
  if (num_attention_heads % num_key_value_heads != 0) {
    fail(origin, "num_attention_heads (" + std::to_string(num_attention_heads) +
                     ") must be a multiple of num_key_value_heads (" +
                     std::to_string(num_key_value_heads) + ")");
  }
  if (head_dim % 2 != 0) fail(origin, "head_dim must be even for RoPE");
  if (!(rope_theta > 0.0f) || !std::isfinite(rope_theta)) {
    fail(origin, "rope_theta must be a positive number");
  }
  if (!(rms_norm_eps > 0.0f) || !std::isfinite(rms_norm_eps)) {
    fail(origin, "rms_norm_eps must be a positive number");
  }
  try {
    rope_frequencies(*this);  // rotary dim, factors: what the executors will need
  } catch (const std::invalid_argument& e) {
    fail(origin, e.what());
  }
  if (qk_norm != has_qk_norm(model_type) && model_type != "minimind") {
    fail(origin, "qk_norm is " + std::string(qk_norm ? "true" : "false") + " but model_type is " +
                     model_type +
                     " (only qwen3, qwen3_moe, minimind, gemma3_text have q/k norms; use "
                     "set_model_type)");
  }
  if (attention_bias != (model_type == "qwen2" || gpt_oss())) {
    fail(origin, "attention_bias is " + std::string(attention_bias ? "true" : "false") +
                     " but model_type is " + model_type +
                     " (only qwen2's and gpt_oss's biases are supported; use set_model_type)");
  }
  validate_moe(*this, origin);
  validate_gpt_oss(*this, origin);
  validate_rope_layers(*this, origin);
  validate_layer_types(*this, origin);
  validate_linear_attention(*this, origin);
  if (gemma_layout() && layer_types.empty()) {
    fail(origin, model_type + " needs layer_types (one per layer)");
  }
}

ModelConfig ModelConfig::from_json(const std::string& text, const std::string& origin) {
  const json j = parse_json_text(text, origin);
  ModelConfig c;
  if (!has(j, "model_type") || !j.at("model_type").is_string()) {
    fail(origin, "missing string field \"model_type\"");
  }
  const std::string type = j.at("model_type").get<std::string>();
  if (type == "gemma3") return from_json(gemma3_text_config(j, origin), origin + " text_config");
  if (type == "qwen3_5" || type == "qwen3_5_moe") {
    return from_json(qwen3_5_text_config(j, origin), origin + " text_config");
  }
  if (!known_model_type(type)) {
    fail(origin,
         "model_type \"" + type + "\" is not supported (supported: " + kSupportedTypes + ")");
  }
  c.set_model_type(type);

  // Gemma 3's multimodal configs leave most text fields to Gemma3TextConfig's defaults.
  const bool gemma = type == "gemma3_text";
  const bool gpt_oss = type == "gpt_oss";
  auto gemma_default = [&](int32_t v) { return gemma ? std::optional(v) : std::nullopt; };
  c.hidden_size = get_int(j, "hidden_size", gemma_default(2304), origin);
  c.num_hidden_layers = get_int(j, "num_hidden_layers", gemma_default(26), origin);
  c.num_attention_heads = get_int(j, "num_attention_heads", gemma_default(8), origin);
  c.num_key_value_heads =
      get_int(j, "num_key_value_heads", gemma ? 4 : c.num_attention_heads, origin);
  c.intermediate_size = get_int(
      j, "intermediate_size",
      type == "minimind" ? std::optional(minimind_default_intermediate_size(j, c.hidden_size))
      : gemma            ? gemma_default(9216)
                         : sparse_only_intermediate_size(j, type, origin),
      origin);
  c.vocab_size = get_int(j, "vocab_size", gemma_default(262208), origin);
  c.max_position_embeddings = get_int(j, "max_position_embeddings", gemma ? 131072 : 4096, origin);
  if (gemma && !has(j, "head_dim")) {
    c.head_dim = 256;
  } else if (gpt_oss && !has(j, "head_dim")) {
    c.head_dim = 64;  // GptOssConfig's default
  } else if (has(j, "head_dim")) {
    c.head_dim = get_int(j, "head_dim", std::nullopt, origin);
  } else {
    if (c.num_attention_heads <= 0 || c.hidden_size % c.num_attention_heads != 0) {
      fail(origin, "no \"head_dim\" and hidden_size " + std::to_string(c.hidden_size) +
                       " is not divisible by num_attention_heads " +
                       std::to_string(c.num_attention_heads));
    }
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  // SmolLM3's own default base (transformers' SmolLM3Config), the others' HF one.
  c.rope_theta = get_float(j, "rope_theta",
                           type == "smollm3"       ? 2e6f
                           : type == "gemma3_text" ? 1e6f
                           : gpt_oss               ? 150000.0f
                                                   : 10000.0f,
                           origin);
  c.rms_norm_eps = get_float(j, "rms_norm_eps", type == "phi3" || gpt_oss ? 1e-5f : 1e-6f, origin);
  const std::optional<bool> tie = get_bool(j, "tie_word_embeddings", origin);
  // False is the HF default for the Llama/Qwen families; MiniMind, SmolLM3 and Gemma tie by
  // default.
  c.tie_word_embeddings =
      tie.value_or(type == "minimind" || type == "smollm3" || type.starts_with("gemma"));
  c.tie_word_embeddings_stated = tie.has_value();

  if (!type.starts_with("gemma") && has(j, "hidden_act") && j.at("hidden_act") != "silu") {
    fail(origin, "hidden_act " + j.at("hidden_act").dump() + " is not supported (only silu)");
  }
  // qwen2 always has q/k/v biases and reads no flag; elsewhere a bias would also sit on o_proj,
  // which gpt_oss always has (GptOssConfig's attention_bias defaults to true).
  if (gpt_oss && !get_bool(j, "attention_bias", origin).value_or(true)) {
    fail(origin, "attention_bias false is not supported for model_type gpt_oss");
  }
  if (type != "qwen2" && !gpt_oss && get_bool(j, "attention_bias", origin).value_or(false)) {
    fail(origin, "attention_bias true is not supported for model_type " + type);
  }
  if (get_bool(j, "lm_head_bias", origin).value_or(false)) {  // a Phi-3 flag
    fail(origin, "lm_head_bias true is not supported");
  }
  if (get_bool(j, "mlp_bias", origin).value_or(false)) {
    fail(origin, "mlp_bias true is not supported");
  }
  c.rope_scaling = parse_rope_scaling(j.value("rope_scaling", json()), origin);
  const bool hybrid = ModelConfig::is_hybrid_model_type(type);
  // Qwen3.5 rotates a quarter of each head by default (Qwen3NextConfig's partial_rotary_factor).
  c.partial_rotary_factor = get_float(j, "partial_rotary_factor", hybrid ? 0.25f : 1.0f, origin);
  if (!has(j, "rope_scaling") && has(j, "rope_parameters")) {  // transformers v5's one block
    const json block =
        hybrid ? without_mrope_fields(j.at("rope_parameters")) : j.at("rope_parameters");
    c.rope_scaling = parse_rope_parameters(block, origin, &c.rope_theta, &c.partial_rotary_factor);
  }
  // Phi-3 states LongRoPE's pretrained context at the top level, beside max_position_embeddings.
  if (c.rope_scaling.type == RopeType::longrope &&
      !c.rope_scaling.original_max_position_embeddings &&
      has(j, "original_max_position_embeddings")) {
    c.rope_scaling.original_max_position_embeddings =
        get_int(j, "original_max_position_embeddings", std::nullopt, origin);
    if (*c.rope_scaling.original_max_position_embeddings <= 0) {
      fail(origin, "field \"original_max_position_embeddings\" must be positive");
    }
  }

  // Sliding-window attention equals full attention while the context fits in the window.
  int32_t window = 0;
  // Phi-3 applies its window whenever config.json names one (Phi-3-mini-4k: 2047).
  if ((type == "mistral" || type == "phi3") && has(j, "sliding_window")) {
    window = get_int(j, "sliding_window", std::nullopt, origin);
  } else if ((type == "qwen2" || type == "qwen3" || type == "qwen3_moe") &&
             get_bool(j, "use_sliding_window", origin).value_or(false) &&
             has(j, "sliding_window")) {
    window = get_int(j, "sliding_window", std::nullopt, origin);
  }
  if (window > 0 && window < c.max_position_embeddings) {
    // A scaled context would outgrow the window that capping relies on (vLLM refuses this too).
    if (c.rope_scaling.type != RopeType::none) {
      fail(origin, "sliding_window " + std::to_string(window) + " together with rope_scaling " +
                       rope_type_name(c.rope_scaling.type) + " is not supported");
    }
    c.max_position_embeddings = window;
  }

  if (type == "smollm3") read_rope_layers(j, origin, &c);
  if (type == "gemma3_text" || type == "gemma2") read_gemma_fields(j, origin, &c);
  if (gpt_oss) read_gpt_oss_fields(j, origin, &c);
  if (hybrid) read_linear_attention_fields(j, origin, &c);
  if (type == "minimind") c.qk_norm = !minimind_is_v2(j);
  read_moe_fields(j, origin, &c);

  c.eos_token_ids = get_id_list(j, "eos_token_id", origin);
  const std::vector<int32_t> bos = get_id_list(j, "bos_token_id", origin);
  c.bos_token_id = bos.empty() ? -1 : bos.front();

  c.validate(origin);
  return c;
}

ModelConfig ModelConfig::from_dir(const std::string& model_dir) {
  namespace fs = std::filesystem;
  const std::string config_path = (fs::path(model_dir) / "config.json").string();
  if (!fs::exists(config_path)) {
    throw std::runtime_error(config_path + ": not found (is " + model_dir +
                             " a Hugging Face model directory?)");
  }
  const std::string text = read_text_file(config_path);
  ModelConfig c = from_json(text, config_path);
  if (const json top = json::parse(text, nullptr, false);
      top.is_object() && has(top, "vision_config")) {
    std::fprintf(stderr,
                 "pagedserve: %s: the vision tower (vision_config) is ignored; serving "
                 "the text model only\n",
                 config_path.c_str());
  }

  // generation_config.json wins for eos/bos: it is what HF generate() uses.
  const std::string gen_path = (fs::path(model_dir) / "generation_config.json").string();
  if (fs::exists(gen_path)) {
    const json g = parse_json_text(read_text_file(gen_path), gen_path);
    std::vector<int32_t> eos = get_id_list(g, "eos_token_id", gen_path);
    if (!eos.empty()) c.eos_token_ids = std::move(eos);
    const std::vector<int32_t> bos = get_id_list(g, "bos_token_id", gen_path);
    if (!bos.empty()) c.bos_token_id = bos.front();
  }
  for (int32_t id : c.eos_token_ids) {
    if (id < 0 || id >= c.vocab_size) {
      throw std::runtime_error(config_path + ": eos_token_id " + std::to_string(id) +
                               " is outside the vocabulary of " + std::to_string(c.vocab_size));
    }
  }
  return c;
}

}  // namespace ps
