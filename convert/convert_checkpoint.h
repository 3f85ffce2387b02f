#pragma once
// `pagedserve convert`: a torch.save state_dict (.pth) -> a Hugging Face checkpoint directory
// (config.json, model.safetensors, tokenizer files) that load_model, vLLM and SGLang read.
// Torch-free header: app/ calls it.
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace ps {

// Config values given explicitly (flags, or a config file). Unset fields are inferred from the
// tensor shapes where possible, else take ModelConfig's defaults.
struct ShapeOverrides {
  std::optional<std::string> model_type;  // qwen3 | qwen2 | llama | qwen3_moe
  std::optional<int32_t> hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
      head_dim, intermediate_size, vocab_size, max_position_embeddings, bos_token_id;
  std::optional<float> rope_theta, rms_norm_eps;
  std::optional<bool> tie_word_embeddings;
  std::optional<std::vector<int32_t>> eos_token_ids;
  std::optional<int32_t> num_experts_per_tok;  // MoE .pth: not readable off the tensors
  std::optional<bool> norm_topk_prob;

  // Fields set in `other` replace ours.
  void apply(const ShapeOverrides& other);
  // Reads a Hugging Face config.json or a MiniMind LMConfig dump (dim, n_layers, n_heads,
  // n_kv_heads, norm_eps, max_seq_len are accepted as aliases). An unknown model_type (e.g.
  // "minimind") is left for inference. Throws std::runtime_error naming `path`.
  static ShapeOverrides from_config_file(const std::string& path);
};

struct ConvertOptions {
  std::string from;            // the .pth
  std::string to;              // output directory
  ShapeOverrides flags;        // win over the config file
  std::string config_file;     // empty: config.json next to `from`, when there is one
  std::string tokenizer_dir;   // empty: the directory of `from`
  std::string dtype = "auto";  // f32 | bf16 | f16 | auto (the embedding's stored dtype)
};

struct ConvertReport {
  ModelConfig config;
  std::string dtype;
  std::string config_source;         // "flags and tensor shapes" or the file used
  int tensors = 0;                   // written to model.safetensors
  std::vector<std::string> ignored;  // recomputed buffers skipped (RoPE tables, masks)
  std::vector<std::string> copied;   // tokenizer and generation files copied
  std::vector<std::string> notes;    // defaults taken that the user may want to override
};

// Reads, maps and checks everything before writing anything: unknown or missing tensors,
// duplicates and shape mismatches are all reported by name in one std::runtime_error, and then
// nothing is written.
ConvertReport convert_checkpoint(const ConvertOptions& options);

}  // namespace ps
