#pragma once
// OpenAI's gpt-oss (config.json `model_type: "gpt_oss"`): the fields that set it apart from the
// other decoders. Its attention alternates sliding (window 128) and full layers, every q/k/v/o
// projection carries a bias, and each head has a learned sink logit; its MLP is a mixture of
// experts with a biased router and biased experts whose gate/up rows interleave, a clamped
// SwiGLU, and weights stored MXFP4 (kernels/mxfp4.h). Read and written beside model_config.cpp.
#include <string>

#include <nlohmann/json.hpp>

namespace ps {

struct ModelConfig;

// Fills c's layer kinds, window and MoE fields from a gpt_oss config.json (after
// num_hidden_layers and intermediate_size). Throws std::runtime_error naming the file and field,
// also for what the engine does not serve (a quantization other than mxfp4, or none: experts
// stored dequantized).
void read_gpt_oss_fields(const nlohmann::json& config, const std::string& origin, ModelConfig* c);
// Throws std::runtime_error (prefixed with `origin`) when a gpt_oss shape cannot be served: no
// experts, or a hidden or expert width that is not a multiple of MXFP4's 32-weight block.
void validate_gpt_oss(const ModelConfig& c, const std::string& origin);
// Adds what read_gpt_oss_fields reads back.
void write_gpt_oss_fields(const ModelConfig& c, nlohmann::json* config);

}  // namespace ps
