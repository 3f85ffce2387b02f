#include <cstdio>

#include "app/commands.h"
#include "app/flags.h"
#include "checkpoint/tiny_model.h"

namespace ps {
namespace {

// Phi-4-mini's RoPE: a partial rotary dim and LongRoPE, whose per-frequency factors are made up
// here (short ones near 1, long ones growing to 32 over the low frequencies, as the real ones do).
void set_phi3_rope(const Flags& flags, ModelConfig* c) {
  c->partial_rotary_factor = static_cast<float>(flags.f64("partial-rotary-factor", 0.75));
  const int64_t original =
      flags.i64("original-max-position-embeddings", c->max_position_embeddings / 4);
  if (original < 1 || original > c->max_position_embeddings) {
    throw UsageError(
        "flag --original-max-position-embeddings must be in [1, "
        "--max-position-embeddings]");
  }
  const int32_t half = rotary_dim_of(c->head_dim, c->partial_rotary_factor) / 2;
  if (half < 1) throw UsageError("flag --partial-rotary-factor leaves no rotary dims");
  RopeScaling& rs = c->rope_scaling;
  rs.type = RopeType::longrope;
  rs.factor = 0;  // max_position_embeddings / original, as Phi-3's configs leave it
  rs.original_max_position_embeddings = static_cast<int32_t>(original);
  for (int32_t i = 0; i < half; ++i) {
    const double t = half > 1 ? double(i) / double(half - 1) : 0.0;
    rs.short_factor.push_back(1.0 + 0.25 * t);
    rs.long_factor.push_back(1.0 + 31.0 * t * t);
  }
}

// Gemma 3's layers: every pattern-th one global, the others sliding over the last W positions,
// their RoPE base 10000 beside the global 1e6.
void set_gemma3_layers(const Flags& flags, ModelConfig* c) {
  const int64_t window = flags.i64("sliding-window", 512);
  const int64_t pattern = flags.i64("sliding-window-pattern", 6);
  if (window < 1 || window > (1 << 30)) throw UsageError("flag --sliding-window must be positive");
  if (pattern < 1 || pattern > 1024) {
    throw UsageError("flag --sliding-window-pattern must be in [1, 1024]");
  }
  c->sliding_window = static_cast<int32_t>(window);
  c->rope_local_base_freq = 10000.0f;
  c->query_pre_attn_scalar = float(c->head_dim);
  c->layer_types.clear();
  for (int32_t l = 0; l < c->num_hidden_layers; ++l) {
    c->layer_types.push_back((l + 1) % pattern == 0 ? LayerType::full_attention
                                                    : LayerType::sliding_attention);
  }
}

// gpt-oss's attention: sliding and full layers alternate, layer 0 sliding (GptOssConfig's
// default), the window 128 unless --sliding-window says otherwise.
void set_gpt_oss_layers(const Flags& flags, ModelConfig* c) {
  if (flags.has("sliding-window-pattern")) {
    throw UsageError(
        "gpt_oss alternates sliding and full layers; --sliding-window-pattern is "
        "gemma3_text's");
  }
  const int64_t window = flags.i64("sliding-window", 128);
  if (window < 1 || window > (1 << 30)) throw UsageError("flag --sliding-window must be positive");
  c->sliding_window = static_cast<int32_t>(window);
  c->layer_types.clear();
  for (int32_t l = 0; l < c->num_hidden_layers; ++l) {
    c->layer_types.push_back(l % 2 == 0 ? LayerType::sliding_attention : LayerType::full_attention);
  }
}

// Qwen3.5's hybrid layers: every --full-attention-interval-th layer (4) gated full attention, the
// others Gated DeltaNet with the --linear-* shape; a quarter of each head rotates by default.
void set_qwen3_5_layers(const Flags& flags, ModelConfig* c) {
  auto positive = [&](const char* name, int64_t fallback) {
    const int64_t v = flags.i64(name, fallback);
    if (v < 1 || v > 4096)
      throw UsageError(std::string("flag --") + name + " must be in [1, 4096]");
    return static_cast<int32_t>(v);
  };
  LinearAttentionShape& s = c->linear;
  s.num_key_heads = positive("linear-num-key-heads", 4);
  s.num_value_heads = positive("linear-num-value-heads", 8);
  s.key_head_dim = positive("linear-key-head-dim", 32);
  s.value_head_dim = positive("linear-value-head-dim", 32);
  s.conv_kernel = positive("linear-conv-kernel", 4);
  if (s.num_value_heads % s.num_key_heads != 0) {
    throw UsageError("--linear-num-value-heads must be a multiple of --linear-num-key-heads");
  }
  const int32_t interval = positive("full-attention-interval", 4);
  c->attn_output_gate = true;
  c->partial_rotary_factor = static_cast<float>(flags.f64("partial-rotary-factor", 0.25));
  c->layer_types.clear();
  for (int32_t l = 0; l < c->num_hidden_layers; ++l) {
    c->layer_types.push_back((l + 1) % interval == 0 ? LayerType::full_attention
                                                     : LayerType::linear_attention);
  }
}

}  // namespace

int make_tiny_model_command(int argc, char** argv) {
  Flags flags(argc, argv, 2,
              {"hidden-size",
               "num-layers",
               "num-heads",
               "num-kv-heads",
               "head-dim",
               "intermediate-size",
               "vocab-size",
               "max-position-embeddings",
               "rope-theta",
               "model-type",
               "dtype",
               "shards",
               "seed",
               "num-experts",
               "num-experts-per-tok",
               "moe-intermediate-size",
               "partial-rotary-factor",
               "original-max-position-embeddings",
               "sliding-window",
               "sliding-window-pattern",
               "linear-num-key-heads",
               "linear-num-value-heads",
               "linear-key-head-dim",
               "linear-value-head-dim",
               "linear-conv-kernel",
               "full-attention-interval",
               "shared-expert-intermediate-size"},
              {"untied", "help"});
  if (flags.on("help") || flags.positional().size() != 1) {
    std::fprintf(
        stderr,
        "usage: pagedserve make-tiny-model DIR [--dtype f32|bf16|f16] [--shards N] "
        "[--seed S]\n  [--model-type "
        "qwen3|qwen2|llama|qwen3_moe|smollm3|phi3|gemma3_text|gpt_oss|qwen3_5_text|\n"
        "    qwen3_5_moe|qwen3_next]\n  "
        "[--hidden-size 512] "
        "[--num-layers 8] [--num-heads 8] [--num-kv-heads 2]\n  [--head-dim 64] "
        "[--intermediate-size 1408] [--vocab-size 6400] [--max-position-embeddings "
        "4096]\n  [--rope-theta 1e6] [--untied]\n  qwen3_moe: [--num-experts 8] "
        "[--num-experts-per-tok 2] [--moe-intermediate-size 704] (every layer sparse, "
        "top-k renormalised)\n  smollm3: every 4th layer NoPE (no_rope_layers)\n  phi3: "
        "qkv_proj and gate_up_proj fused, LongRoPE [--partial-rotary-factor 0.75]\n"
        "    [--original-max-position-embeddings max/4]\n  gemma3_text: [--sliding-window 512] "
        "[--sliding-window-pattern 6] (every 6th layer global)\n  gpt_oss: [--num-experts 4] "
        "[--num-experts-per-tok 2] [--sliding-window 128] (experts MXFP4, --intermediate-size "
        "wide;\n    sliding and full layers alternate; q/k/v/o biases, attention sinks)\n"
        "  qwen3_5_text: [--full-attention-interval 4] [--linear-num-key-heads 4]\n"
        "    [--linear-num-value-heads 8] [--linear-key-head-dim 32] [--linear-value-head-dim 32]\n"
        "    [--linear-conv-kernel 4] [--partial-rotary-factor 0.25] (Gated DeltaNet layers, the\n"
        "    others gated full attention)\n"
        "  qwen3_5_moe (written as qwen3_5_moe_text), qwen3_next: qwen3_5_text's flags and\n"
        "    qwen3_moe's, [--shared-expert-intermediate-size moe width] (every layer sparse, a\n"
        "    sigmoid-gated shared expert; qwen3_next fuses in_proj_qkvz / in_proj_ba per key "
        "head,\n"
        "    qwen3_5_moe stacks the experts as mlp.experts.gate_up_proj / down_proj)\n");
    if (flags.on("help")) return 0;
    throw UsageError("expected exactly one DIR argument");
  }
  TinyModelOptions o;
  ModelConfig& c = o.config;
  c.model_type = flags.str("model-type", c.model_type);
  if (c.model_type == "qwen3_5_moe") c.model_type = "qwen3_5_moe_text";  // the text model's type
  const bool hybrid = ModelConfig::is_hybrid_model_type(c.model_type);
  if (c.model_type != "qwen3" && c.model_type != "qwen2" && c.model_type != "llama" &&
      c.model_type != "qwen3_moe" && c.model_type != "smollm3" && c.model_type != "phi3" &&
      c.model_type != "gemma3_text" && c.model_type != "gpt_oss" && !hybrid) {
    throw UsageError(
        "flag --model-type must be qwen3, qwen2, llama, qwen3_moe, smollm3, phi3, gemma3_text, "
        "gpt_oss, qwen3_5_text, qwen3_5_moe or qwen3_next, got '" +
        c.model_type + "'");
  }
  c.qk_norm = c.model_type == "qwen3" || c.model_type == "qwen3_moe" ||
              c.model_type == "gemma3_text" || hybrid;
  c.attention_bias = c.model_type == "qwen2" || c.model_type == "gpt_oss";
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
  if (c.model_type == "gemma3_text") {
    set_gemma3_layers(flags, &c);
  } else if (c.model_type == "gpt_oss") {
    set_gpt_oss_layers(flags, &c);
  } else if (flags.has("sliding-window") || flags.has("sliding-window-pattern")) {
    throw UsageError(
        "--sliding-window and --sliding-window-pattern need --model-type gemma3_text or "
        "gpt_oss");
  }
  for (const char* name :
       {"linear-num-key-heads", "linear-num-value-heads", "linear-key-head-dim",
        "linear-value-head-dim", "linear-conv-kernel", "full-attention-interval"}) {
    if (!hybrid && flags.has(name)) {
      throw UsageError(std::string("flag --") + name +
                       " needs --model-type qwen3_5_text, qwen3_5_moe or qwen3_next");
    }
  }
  if (c.model_type == "phi3") {
    set_phi3_rope(flags, &c);
  } else if (hybrid) {
    set_qwen3_5_layers(flags, &c);
  } else if (flags.has("partial-rotary-factor") || flags.has("original-max-position-embeddings")) {
    throw UsageError(
        "--partial-rotary-factor and --original-max-position-embeddings need "
        "--model-type phi3");
  }
  const bool hybrid_moe = c.model_type == "qwen3_5_moe_text" || c.model_type == "qwen3_next";
  if (c.model_type == "qwen3_moe" || hybrid_moe) {
    c.moe.num_experts = dim("num-experts", 8);
    c.moe.num_experts_per_tok = dim("num-experts-per-tok", 2);
    c.moe.moe_intermediate_size = dim("moe-intermediate-size", c.intermediate_size / 2);
    c.moe.norm_topk_prob = true;
    if (hybrid_moe) {
      c.moe.shared_expert_intermediate_size =
          dim("shared-expert-intermediate-size", c.moe.moe_intermediate_size);
    }
    if (c.moe.num_experts_per_tok > c.moe.num_experts) {
      throw UsageError("--num-experts-per-tok must not exceed --num-experts");
    }
  } else if (c.model_type == "gpt_oss") {
    // gpt-oss's intermediate_size is one expert's width; its weights are MXFP4 (blocks of 32).
    if (flags.has("moe-intermediate-size")) {
      throw UsageError("gpt_oss takes its expert width from --intermediate-size");
    }
    c.moe.num_experts = dim("num-experts", 4);
    c.moe.num_experts_per_tok = dim("num-experts-per-tok", 2);
    c.moe.moe_intermediate_size = c.intermediate_size;
    c.moe.norm_topk_prob = true;
    c.moe.gpt_oss_experts = true;
    c.moe.swiglu_limit = 7.0f;
    if (c.moe.num_experts_per_tok > c.moe.num_experts) {
      throw UsageError("--num-experts-per-tok must not exceed --num-experts");
    }
    if (c.hidden_size % 32 != 0 || c.intermediate_size % 32 != 0) {
      throw UsageError(
          "gpt_oss's MXFP4 experts need --hidden-size and --intermediate-size to be multiples of "
          "32");
    }
  } else if (flags.has("num-experts") || flags.has("num-experts-per-tok") ||
             flags.has("moe-intermediate-size")) {
    throw UsageError(
        "the expert flags need --model-type qwen3_moe, qwen3_5_moe, qwen3_next or "
        "gpt_oss");
  }
  if (!hybrid_moe && flags.has("shared-expert-intermediate-size")) {
    throw UsageError(
        "--shared-expert-intermediate-size needs --model-type qwen3_5_moe or "
        "qwen3_next");
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
