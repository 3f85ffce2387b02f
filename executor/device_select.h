#pragma once
// --device auto|cpu|cuda and --gpu-memory-utilization: which executor serves, decided once at
// start from what the binary was built with, what the machine has and what the model needs.
// Plain C++ (no CUDA headers): the same logic runs, and is tested, in builds without CUDA.
#include <cstdint>
#include <string>

#include "model/model_config.h"

namespace ps {

enum class Device { auto_select, cpu, cuda };
Device parse_device(const std::string& name);  // throws std::invalid_argument listing choices
const char* device_name(Device d);             // "auto" | "cpu" | "cuda"

// How the CUDA executor sizes its KV cache (model/kv_sizing.h); ignored on CPU.
struct DeviceOptions {
  Device device = Device::cpu;
  double gpu_memory_utilization = 0.9;  // fraction of the GPU's total memory pagedserve may use
  int64_t kv_cache_memory = 0;          // > 0: --kv-cache-memory given, these bytes exactly
  bool cuda_graphs = true;              // false: --enforce-eager (every step launched eagerly)
};

// What this process can see of CUDA: filled by probe_cuda() (executor/cuda_probe.cpp), or by hand
// in tests.
struct CudaAvailability {
  bool built_with_cuda = false;  // PAGEDSERVE_CUDA=ON at build time
  int32_t device_count = 0;
  std::string detail;  // the runtime's error when there is no device, else the device's name
};
CudaAvailability probe_cuda();

// Why the CUDA executor cannot run this model with these settings ("" when it can): MoE layers,
// partial rotary, head_dim outside 64/128/256, int8 weights, adapters.
struct CudaFeatureUse {
  bool int8_weights = false;
  int32_t max_loras = 0;
};
std::string cuda_unsupported_reason(const ModelConfig& c, const CudaFeatureUse& use);

// The device that serves. cpu stays cpu. cuda needs a CUDA build, a GPU and a supported model;
// otherwise throws std::runtime_error naming --device and what to do. auto is cuda when all three
// hold, else cpu (and *note, when given, says why cuda was passed over).
Device resolve_device(Device requested, const CudaAvailability& cuda,
                      const std::string& unsupported_reason, std::string* note = nullptr);

}  // namespace ps
