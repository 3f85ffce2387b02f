#pragma once
// RoPE scaling (config.json `rope_scaling`, `partial_rotary_factor`): the inverse frequencies
// and the cos/sin scale every executor and the naive oracle build their rotation tables from,
// computed once from the config so that all of them rotate by the same angles. Plain C++: the
// CPU runner, the oracle and a CUDA executor can all share it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ps {

struct ModelConfig;

// The rope_scaling types Hugging Face transformers names in ROPE_INIT_FUNCTIONS that we support.
enum class RopeType { none, linear, dynamic, llama3, yarn, longrope };

const char* rope_type_name(RopeType type);  // "default" for none, else HF's name

// One config.json `rope_scaling` block as written (fields left out stay unset, so to_json
// writes back what it read).
struct RopeScaling {
  RopeType type = RopeType::none;
  // Required by every type but none and longrope; longrope without one: 0, which means
  // max_position_embeddings / original_max_position_embeddings (HF's Phi-3 rule).
  double factor = 1.0;
  // llama3 (all required): frequencies whose wavelength exceeds original / low_freq_factor are
  // divided by factor, those below original / high_freq_factor kept, the band between blended.
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  // Required by llama3; optional for yarn, where it falls back to max_position_embeddings, and
  // for longrope, where config.json's top-level field of that name fills it (Phi-3 writes it
  // there) and max_position_embeddings is the last fallback.
  std::optional<int32_t> original_max_position_embeddings;
  // longrope (both required, rotary_dim / 2 entries each): per-frequency divisors of the
  // inverse frequency, the short ones for contexts within original_max_position_embeddings.
  std::vector<double> short_factor, long_factor;
  // yarn, all optional (HF's defaults apply when unset).
  std::optional<double> beta_fast, beta_slow;    // 32 and 1
  std::optional<double> mscale, mscale_all_dim;  // DeepSeek-style attention factor
  std::optional<double> attention_factor;        // yarn, longrope: overrides the computed one
  std::optional<bool> truncate;                  // true: floor/ceil the correction range

  bool operator==(const RopeScaling&) const = default;
};

// Parses `rope_scaling` (null or absent: RopeType::none). The type is read from "rope_type"
// (HF's current key) or "type" (the older one). Throws std::runtime_error prefixed with
// `origin`, naming the unknown type or the missing/ill-typed field.
RopeScaling parse_rope_scaling(const nlohmann::json& value, const std::string& origin);
// transformers v5 writes one `rope_parameters` block instead of rope_theta + rope_scaling: the
// scaling fields plus "rope_theta" and "partial_rotary_factor", "rope_type" absent meaning
// default. Sets *theta / *partial_rotary_factor when the block has them. Per-layer-type blocks
// ({"full_attention": {...}, "sliding_attention": {...}}) are refused.
RopeScaling parse_rope_parameters(const nlohmann::json& value, const std::string& origin,
                                  float* theta, float* partial_rotary_factor);
// The block that parse_rope_scaling reads back (null for none).
nlohmann::json rope_scaling_to_json(const RopeScaling& rs);

// What a rotation table is built from.
struct RopeFrequencies {
  int32_t rotary_dim = 0;         // leading dims of each head that rotate (the rest pass through)
  std::vector<float> inv_freq;    // [rotary_dim / 2]; angle(pos, i) = float(pos) * inv_freq[i]
  float attention_factor = 1.0f;  // cos and sin are multiplied by it (yarn), as HF does
};

// As HF's _compute_{default,linear_scaling,dynamic_ntk,llama3,yarn}_parameters compute them
// (transformers/modeling_rope_utils.py), with one deliberate difference for `dynamic`: HF
// recomputes the base from the current sequence length, which would make a sequence's logits
// depend on how long it (or its batch) is; like vLLM, we fix the base once for a context of
// max_position_embeddings * factor. And for `longrope`: HF picks the long factors when the
// forward's longest position passes original_max_position_embeddings, which depends on the batch
// and would leave a cached prefix rotated by the other set; like vLLM and llama.cpp we pick
// once, long when the serving context (ModelConfig::rope_context_len, else the model's) is
// longer than original_max_position_embeddings. Throws std::invalid_argument on an inconsistent
// config.
RopeFrequencies rope_frequencies(const ModelConfig& c);
// longrope: whether rope_frequencies uses long_factor for `c` (false for other types).
bool uses_long_rope_factors(const ModelConfig& c);

// The rotary dim for head_dim and partial_rotary_factor, as HF: int(head_dim * factor).
int32_t rotary_dim_of(int32_t head_dim, float partial_rotary_factor);

// The longest context the engine allows, as vLLM derives it: max_position_embeddings * factor
// for linear and dynamic, original_max_position_embeddings (else max_position_embeddings) *
// factor for yarn, and max_position_embeddings unchanged for none, llama3 and longrope (Llama
// 3.1's and Phi-3's configs already state the extended length).
int32_t scaled_context_len(const RopeScaling& rs, int32_t max_position_embeddings);

}  // namespace ps
