#pragma once
// LoRA adapters merged into base weights: W' = W + scale * B @ A for every adapted linear, with
// scale = lora_alpha / r (lora_alpha / sqrt(r) under use_rslora). Merging once at load time
// makes an adapted model exactly as fast as the base. Torch-free header: app/ calls it.
#include <string>
#include <vector>

#include "checkpoint/loader.h"

namespace ps {

struct LoraReport {
  std::string source;  // the tensor file read
  int32_t rank = 0;
  float alpha = 0;
  float scale = 0;
  std::vector<std::string> modules;  // Hugging Face weight names that changed
};

// Reads an adapter, either
//  - a PEFT directory: adapter_config.json (r, lora_alpha, ...) + adapter_model.safetensors or
//    adapter_model.bin, tensors "base_model.model.<module>.lora_A.weight" [r, in] and
//    "...lora_B.weight" [out, r]; or a .safetensors file with adapter_config.json beside it;
//  - a torch.save .pth state_dict of lora_A / lora_B tensors (PEFT names, with or without the
//    ".default" adapter name, or MiniMind's "<module>.lora.A.weight"); alpha comes from an
//    adapter_config.json beside it, else alpha = r (scale 1, as MiniMind's LoRA computes).
// Module names go through the same mapping as `convert` (MiniMind or Hugging Face spelling).
// Returns `base` with the adapter merged; `base` itself is not modified. Throws
// std::runtime_error naming the adapter file and tensor on bad ranks, shapes, unknown modules or
// tensors, or unsupported options (DoRA, fan_in_fan_out, rank_pattern).
LoadedModel merge_lora(const LoadedModel& base, const std::string& adapter,
                       LoraReport* report = nullptr);

// `pagedserve merge-lora`: load_model(base_dir), merge, write out_dir (config.json,
// model.safetensors in `dtype` — "auto" keeps the base's torch_dtype — and every other file of
// base_dir, e.g. the tokenizer, copied).
LoraReport merge_lora_checkpoint(const std::string& base_dir, const std::string& adapter,
                                 const std::string& out_dir, const std::string& dtype = "auto");

}  // namespace ps
