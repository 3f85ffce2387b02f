// `pagedserve convert`, `merge-lora` and `export`: checkpoints between PyTorch training code
// (torch.save state_dicts, LoRA adapters) and the Hugging Face layout the server loads.
#include <cstdio>
#include <string>

#include "app/commands.h"
#include "app/engine_flags.h"
#include "app/flags.h"
#include "convert/convert_checkpoint.h"
#include "convert/lora_merge.h"

namespace ps {
namespace {

std::optional<int32_t> dim(const Flags& flags, const char* name) {
  if (!flags.has(name)) return std::nullopt;
  const int64_t v = flags.i64(name, 0);
  if (v < 1 || v > (1 << 24)) throw UsageError(std::string("flag --") + name + " out of range");
  return static_cast<int32_t>(v);
}

std::optional<float> positive(const Flags& flags, const char* name) {
  if (!flags.has(name)) return std::nullopt;
  const double v = flags.f64(name, 0);
  if (!(v > 0)) throw UsageError(std::string("flag --") + name + " must be positive");
  return static_cast<float>(v);
}

}  // namespace

int convert_command(int argc, char** argv) {
  Flags flags(argc, argv, 2,
              {"from", "to", "arch", "config", "tokenizer", "dtype", "hidden-size", "num-layers",
               "num-heads", "num-kv-heads", "head-dim", "intermediate-size", "vocab-size",
               "max-position-embeddings", "rope-theta", "rms-norm-eps", "num-experts-per-tok"},
              {"tied", "untied", "help"});
  if (flags.on("help")) {
    std::fprintf(
        stderr,
        "usage: pagedserve convert --from MODEL.pth --to DIR [--arch qwen3|qwen2|llama]\n"
        "  [--config config.json] [--tokenizer DIR] [--dtype auto|f32|bf16|f16]\n"
        "  [--hidden-size N] [--num-layers N] [--num-heads N] [--num-kv-heads N] [--head-dim N]\n"
        "  [--intermediate-size N] [--vocab-size N] [--max-position-embeddings N]\n"
        "  [--rope-theta 1e6] [--rms-norm-eps 1e-6] [--tied | --untied]\n"
        "  [--num-experts-per-tok K] (MoE: a .pth with mlp.gate / mlp.experts.J tensors becomes\n"
        "  MiniMind's own format, model_type minimind with use_moe)\n"
        "Reads a torch.save state_dict (MiniMind or Hugging Face tensor names; {\"model\": sd} "
        "and\n"
        "{\"state_dict\": sd} wrappers too). The config comes from --config, else config.json "
        "next\n"
        "to the .pth, then the flags; what none of them says is read off the tensor shapes\n"
        "(rope-theta defaults to 1e6, rms-norm-eps to 1e-6, max-position-embeddings to 4096).\n"
        "tokenizer.json (+ tokenizer_config.json) are copied from next to the .pth or "
        "--tokenizer.\n");
    return 0;
  }
  ConvertOptions o;
  o.from = flags.required("from");
  o.to = flags.required("to");
  o.config_file = flags.str("config", "");
  o.tokenizer_dir = flags.str("tokenizer", "");
  o.dtype = flags.str("dtype", "auto");
  if (auto arch = flags.opt("arch")) {
    if (*arch != "qwen3" && *arch != "qwen2" && *arch != "llama") {
      throw UsageError("flag --arch must be qwen3, qwen2 or llama, got '" + *arch + "'");
    }
    o.flags.model_type = *arch;
  }
  o.flags.hidden_size = dim(flags, "hidden-size");
  o.flags.num_hidden_layers = dim(flags, "num-layers");
  o.flags.num_attention_heads = dim(flags, "num-heads");
  o.flags.num_key_value_heads = dim(flags, "num-kv-heads");
  o.flags.head_dim = dim(flags, "head-dim");
  o.flags.intermediate_size = dim(flags, "intermediate-size");
  o.flags.vocab_size = dim(flags, "vocab-size");
  o.flags.max_position_embeddings = dim(flags, "max-position-embeddings");
  o.flags.rope_theta = positive(flags, "rope-theta");
  o.flags.rms_norm_eps = positive(flags, "rms-norm-eps");
  o.flags.num_experts_per_tok = dim(flags, "num-experts-per-tok");
  if (flags.on("tied") && flags.on("untied")) throw UsageError("--tied and --untied contradict");
  if (flags.on("tied")) o.flags.tie_word_embeddings = true;
  if (flags.on("untied")) o.flags.tie_word_embeddings = false;

  const ConvertReport r = convert_checkpoint(o);
  const ModelConfig& c = r.config;
  std::printf(
      "wrote %s: %s, %d layers, hidden %d, heads %d/%d x %d, intermediate %d, vocab %d, "
      "rope_theta %g, rms_norm_eps %g, %s, %d tensors in %s\n",
      o.to.c_str(), c.model_type.c_str(), c.num_hidden_layers, c.hidden_size, c.num_attention_heads,
      c.num_key_value_heads, c.head_dim, c.intermediate_size, c.vocab_size, c.rope_theta,
      c.rms_norm_eps, c.tie_word_embeddings ? "tied embeddings" : "untied lm_head", r.tensors,
      r.dtype.c_str());
  if (c.moe.enabled()) {
    std::printf("experts: %d routed (top %d, width %d), %d shared\n", c.moe.num_experts,
                c.moe.num_experts_per_tok, c.moe.moe_intermediate_size, c.moe.num_shared_experts);
  }
  std::printf("config from %s\n", r.config_source.c_str());
  for (const std::string& note : r.notes) std::printf("default: %s\n", note.c_str());
  if (!r.ignored.empty()) {
    std::printf("skipped %zu recomputed buffers (e.g. %s)\n", r.ignored.size(),
                r.ignored[0].c_str());
  }
  std::string copied;
  for (const std::string& f : r.copied) copied += " " + f;
  std::printf("copied:%s\n", copied.c_str());
  return 0;
}

int merge_lora_command(int argc, char** argv) {
  Flags flags(argc, argv, 2, {"base", "adapter", "out", "dtype"}, {"help"});
  if (flags.on("help")) {
    std::fprintf(
        stderr,
        "usage: pagedserve merge-lora --base DIR --adapter ADAPTER --out DIR "
        "[--dtype auto|f32|bf16|f16]\n"
        "ADAPTER: a PEFT directory (adapter_config.json + adapter_model.safetensors) or a\n"
        "torch.save .pth of lora_A / lora_B tensors. W' = W + (lora_alpha / r) * B @ A.\n");
    return 0;
  }
  const std::string base = flags.required("base");
  const std::string out = flags.required("out");
  const LoraReport r =
      merge_lora_checkpoint(base, flags.required("adapter"), out, flags.str("dtype", "auto"));
  std::printf("merged %s (rank %d, alpha %g, scale %g) into %zu modules; wrote %s\n",
              r.source.c_str(), r.rank, r.alpha, r.scale, r.modules.size(), out.c_str());
  return 0;
}

}  // namespace ps
