#include <cstdio>

#include "app/commands.h"
#include "app/flags.h"
#include "checkpoint/tiny_model.h"

namespace ps {

int make_tiny_model_command(int argc, char** argv) {
  Flags flags(
      argc, argv, 2,
      {"hidden-size", "num-layers", "num-heads", "num-kv-heads", "head-dim", "intermediate-size",
       "vocab-size", "max-position-embeddings", "rope-theta", "model-type", "dtype", "shards",
       "seed", "num-experts", "num-experts-per-tok", "moe-intermediate-size"},
      {"untied", "help"});
  if (flags.on("help") || flags.positional().size() != 1) {
    std::fprintf(
        stderr,
        "usage: pagedserve make-tiny-model DIR [--dtype f32|bf16|f16] [--shards N] "
        "[--seed S]\n  [--model-type qwen3|qwen2|llama|qwen3_moe|smollm3] [--hidden-size 512] "
        "[--num-layers 8] [--num-heads 8] [--num-kv-heads 2]\n  [--head-dim 64] "
        "[--intermediate-size 1408] [--vocab-size 6400] [--max-position-embeddings "
        "4096]\n  [--rope-theta 1e6] [--untied]\n  qwen3_moe: [--num-experts 8] "
        "[--num-experts-per-tok 2] [--moe-intermediate-size 704] (every layer sparse, "
        "top-k renormalised)\n  smollm3: every 4th layer NoPE (no_rope_layers)\n");
    if (flags.on("help")) return 0;
    throw UsageError("expected exactly one DIR argument");
  }
  TinyModelOptions o;
  ModelConfig& c = o.config;
  c.model_type = flags.str("model-type", c.model_type);
  if (c.model_type != "qwen3" && c.model_type != "qwen2" && c.model_type != "llama" &&
      c.model_type != "qwen3_moe" && c.model_type != "smollm3") {
    throw UsageError("flag --model-type must be qwen3, qwen2, llama, qwen3_moe or smollm3, got '" +
                     c.model_type + "'");
  }
  c.qk_norm = c.model_type == "qwen3" || c.model_type == "qwen3_moe";
  c.attention_bias = c.model_type == "qwen2";
  auto dim = [&](const char* name, int32_t fallback) {
    int64_t v = flags.i64(name, fallback);
    if (v < 1 || v > 65536 * 4) throw UsageError(std::string("flag --") + name + " out of range");
    return static_cast<int32_t>(v);
  };
  c.hidden_size = dim("hidden-size", c.hidden_size);
  c.num_hidden_layers = dim("num-layers", c.num_hidden_layers);
  c.num_attention_heads = dim("num-heads", c.num_attention_heads);
  c.num_key_value_heads = dim("num-kv-heads", c.num_key_value_heads);
  c.head_dim = dim("head-dim", c.head_dim);
  c.intermediate_size = dim("intermediate-size", c.intermediate_size);
  c.vocab_size = dim("vocab-size", c.vocab_size);
  c.max_position_embeddings = dim("max-position-embeddings", c.max_position_embeddings);
  c.rope_theta = static_cast<float>(flags.f64("rope-theta", c.rope_theta));
  c.tie_word_embeddings = !flags.on("untied");
  // SmolLM3's layout: every fourth layer attends without RoPE (transformers' default interval).
  if (c.model_type == "smollm3") {
    c.rope_layers.assign(size_t(c.num_hidden_layers), 1);
    for (size_t l = 3; l < c.rope_layers.size(); l += 4) c.rope_layers[l] = 0;
  }
  if (c.model_type == "qwen3_moe") {
    c.moe.num_experts = dim("num-experts", 8);
    c.moe.num_experts_per_tok = dim("num-experts-per-tok", 2);
    c.moe.moe_intermediate_size = dim("moe-intermediate-size", c.intermediate_size / 2);
    c.moe.norm_topk_prob = true;
    if (c.moe.num_experts_per_tok > c.moe.num_experts) {
      throw UsageError("--num-experts-per-tok must not exceed --num-experts");
    }
  } else if (flags.has("num-experts") || flags.has("num-experts-per-tok") ||
             flags.has("moe-intermediate-size")) {
    throw UsageError("the expert flags need --model-type qwen3_moe");
  }
  if (c.num_attention_heads % c.num_key_value_heads != 0) {
    throw UsageError("--num-heads must be a multiple of --num-kv-heads");
  }
  if (c.head_dim % 2 != 0) throw UsageError("--head-dim must be even (RoPE rotates pairs)");
  const std::string dtype = flags.str("dtype", "f32");
  if (dtype == "f32")
    o.dtype = WeightDtype::kF32;
  else if (dtype == "bf16")
    o.dtype = WeightDtype::kBF16;
  else if (dtype == "f16")
    o.dtype = WeightDtype::kF16;
  else
    throw UsageError("flag --dtype must be f32, bf16 or f16, got '" + dtype + "'");
  int64_t shards = flags.i64("shards", 1);
  if (shards < 1 || shards > 64) throw UsageError("flag --shards must be between 1 and 64");
  o.shards = static_cast<int32_t>(shards);
  o.seed = static_cast<uint64_t>(flags.i64("seed", 0));
  write_tiny_model(flags.positional()[0], o);
  std::printf("wrote %s (%s, %d layers, hidden %d, vocab %d, %s)\n", flags.positional()[0].c_str(),
              c.model_type.c_str(), c.num_hidden_layers, c.hidden_size, c.vocab_size,
              dtype.c_str());
  return 0;
}

}  // namespace ps
