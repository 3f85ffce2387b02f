#pragma once
// Loading a LoRA adapter for serving (issue #22): read and checked as merge-lora reads it
// (lora_reader.h), then laid out for the runner's low-rank add instead of merged. Torch-free
// header: app/ calls it.
#include <cstdint>
#include <memory>
#include <string>

#include "model/lora_adapter.h"
#include "model/model_config.h"

namespace ps {

// Throws std::runtime_error naming the adapter file and tensor on anything read_lora_adapter
// rejects, including a rank over max_rank (> 0).
std::shared_ptr<const LoraAdapter> load_lora_adapter(const ModelConfig& base,
                                                     const std::string& adapter, int32_t max_rank);

}  // namespace ps
