#pragma once
// The factors of a LoRA adapter laid out for the packed forward: per layer and per fused
// projection ("site") of model_runner.cpp, the A of every adapted module stacked so one product
// serves them all, and each module's B with the scale folded in, aimed at its column range of the
// fused output (q | k | v, gate | up). Torch-free.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/packed_linear.h"
#include "model/lora_adapter.h"
#include "model/model_config.h"
#include "model/tensor.h"

namespace ps {

// One adapted linear layer as read from the adapter: W' = W + scale * b @ a.
struct LoraFactors {
  std::string hf_name;         // the base weight, e.g. "model.layers.0.self_attn.q_proj.weight"
  Tensor a;                    // [r, in_features], fp32
  Tensor b;                    // [out_features, r], fp32
  std::string a_name, b_name;  // as the adapter file names them, for messages
};

// The projections of a layer that run as one product in the runner.
enum class LoraSite : uint8_t { kQkv = 0, kOProj = 1, kGateUp = 2, kDown = 3 };
inline constexpr size_t kLoraSitesPerLayer = 4;

// Both products run on the runner's own packed kernel (packed_linear.h): this machine's OpenBLAS
// picks an SSE3 kernel, several times slower at these shapes.
struct LoraSiteFactors {
  // One adapted module of the site: its rank rows [r_begin, r_begin + rank) of the stacked A and
  // the output columns [col, col + b.n()) it adds into.
  struct Part {
    int64_t col = 0;
    int64_t r_begin = 0;
    int64_t rank = 0;
    PackedWeight b;  // scale * B, [out, rank]
  };
  PackedWeight a;  // [sum of ranks, in]; empty: the adapter leaves the site alone
  std::vector<Part> parts;
  bool empty() const { return a.empty(); }
};

struct LoraPacked {
  std::vector<std::array<LoraSiteFactors, kLoraSitesPerLayer>> layers;
  LoraSiteFactors lm_head;
};

// Lays `modules` (shapes already checked against `config`, see convert/lora_reader.h) out by site.
// Throws std::invalid_argument on a module name the runner has no site for.
std::shared_ptr<const LoraAdapter> pack_lora_adapter(const ModelConfig& config,
                                                     std::span<const LoraFactors> modules,
                                                     double scale, LoraAdapterInfo info);

}  // namespace ps
