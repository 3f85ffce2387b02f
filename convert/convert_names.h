#pragma once
// Tensor names of PyTorch-trained decoders -> the Hugging Face names load_model expects
// (model_weights.h). Torch-free so the table is unit-tested without tensors.
#include <string>

namespace ps {

struct MappedName {
  enum class Kind {
    kWeight,   // `hf` is the checkpoint name
    kIgnored,  // a buffer recomputed from config.json (RoPE tables, causal masks)
    kUnknown,  // not a decoder tensor this converter knows
  };
  Kind kind = Kind::kUnknown;
  std::string hf;
};

// Accepts MiniMind names (tok_embeddings, layers.N.attention.wq, attention_norm, ffn_norm,
// feed_forward.w1/w2/w3, norm, output), Hugging Face names with or without the "model." prefix
// (MoE routers and experts too: mlp.gate, mlp.experts.J.*, mlp.shared_experts.K.*),
// and the wrappers training code adds ("module." from DDP, "_orig_mod." from torch.compile,
// "base_model.model." from PEFT).
MappedName map_tensor_name(const std::string& name);

// The MiniMind name of a Hugging Face checkpoint name, for `pagedserve export --names minimind`.
// Returns `hf_name` unchanged when it has no MiniMind spelling.
std::string minimind_name(const std::string& hf_name);

}  // namespace ps
