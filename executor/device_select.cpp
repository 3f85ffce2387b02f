#include "executor/device_select.h"

#include <stdexcept>

#include "model/rope_scaling.h"

namespace ps {

Device parse_device(const std::string& name) {
  if (name == "auto") return Device::auto_select;
  if (name == "cpu") return Device::cpu;
  if (name == "cuda") return Device::cuda;
  throw std::invalid_argument("unknown device '" + name + "' (choose auto, cpu or cuda)");
}

const char* device_name(Device d) {
  switch (d) {
    case Device::auto_select:
      return "auto";
    case Device::cpu:
      return "cpu";
    case Device::cuda:
      return "cuda";
  }
  return "?";
}

std::string cuda_unsupported_reason(const ModelConfig& c, const CudaFeatureUse& use) {
  if (c.num_linear_layers() > 0) {
    return "linear-attention (Gated DeltaNet) layers and their recurrent states (" + c.model_type +
           ") run on the CPU only";
  }
  if (c.moe.num_experts > 0) return "MoE layers (" + c.model_type + ") run on the CPU only";
  if (c.head_dim != 64 && c.head_dim != 128 && c.head_dim != 256) {
    return "head_dim " + std::to_string(c.head_dim) +
           " (the CUDA attention kernel takes 64, 128 or 256)";
  }
  if (rotary_dim_of(c.head_dim, c.partial_rotary_factor) != c.head_dim) {
    return "partial rotary embeddings (partial_rotary_factor " +
           std::to_string(c.partial_rotary_factor) + ")";
  }
  if (use.int8_weights) return "--quantization int8 (CPU packed kernel only)";
  if (use.max_loras > 0) return "LoRA adapters (--max-loras) are CPU-only for now";
  return "";
}

Device resolve_device(Device requested, const CudaAvailability& cuda,
                      const std::string& unsupported_reason, std::string* note) {
  if (requested == Device::cpu) return Device::cpu;
  std::string why_not;
  if (!cuda.built_with_cuda) {
    why_not =
        "this pagedserve was built without CUDA (configure with -DPAGEDSERVE_CUDA=ON "
        "where the CUDA Toolkit is installed)";
  } else if (cuda.device_count <= 0) {
    why_not = "no CUDA GPU is visible" + (cuda.detail.empty() ? "" : " (" + cuda.detail + ")");
  } else if (!unsupported_reason.empty()) {
    why_not = "the model needs what the CUDA executor does not do yet: " + unsupported_reason;
  }
  if (why_not.empty()) return Device::cuda;
  if (requested == Device::cuda) {
    throw std::runtime_error("--device cuda: " + why_not + "; use --device cpu");
  }
  if (note != nullptr) *note = "--device auto chose cpu: " + why_not;
  return Device::cpu;
}

}  // namespace ps
