#pragma once
// A LoRA adapter as the engine serves it: its low-rank factors kept apart from the base weights
// (issue #22), so one base serves many adapters in one batch. Torch-free header: engine/ and api/
// hold adapters by pointer; the factors themselves live in cpu/lora_factors.h (ATen).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ps {

struct LoraAdapterInfo {
  std::string source;  // the tensor file read
  int32_t rank = 0;
  float alpha = 0;
  float scale = 0;
  std::vector<std::string> modules;  // Hugging Face weight names it adapts
};

struct LoraPacked;  // cpu/lora_factors.h

struct LoraAdapter {
  LoraAdapterInfo info;
  std::shared_ptr<const LoraPacked> packed;  // never null in a loaded adapter
};

}  // namespace ps
