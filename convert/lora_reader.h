#pragma once
// Reading a LoRA adapter from disk into fp32 factor pairs checked against the base model's
// shapes. Shared by merge-lora (lora_merge.h merges the pairs into the weights) and serving
// (lora_loader.h keeps them apart, added per request). Torch-free.
#include <string>
#include <vector>

#include "convert/lora_merge.h"
#include "cpu/lora_factors.h"
#include "model/model_config.h"

namespace ps {

struct LoraFile {
  LoraReport report;                 // source, rank, alpha, scale, modules (Hugging Face names)
  double scale = 1.0;                // report.scale before rounding to float
  std::vector<LoraFactors> modules;  // sorted by hf_name (cpu/lora_factors.h)
};

// Reads an adapter in any layout lora_merge.h describes and checks every pair against the shapes
// `base` implies. max_rank > 0 rejects a larger rank (serving's --max-lora-rank). Throws
// std::runtime_error naming the adapter file and the tensor on bad ranks, shapes, unknown
// modules or tensors, or unsupported options.
LoraFile read_lora_adapter(const ModelConfig& base, const std::string& adapter,
                           int32_t max_rank = 0);

}  // namespace ps
