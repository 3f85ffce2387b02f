// Small host-side helpers of kernels.h that need no kernel of their own.
#include "cuda/common.cuh"
#include "cuda/philox.cuh"

namespace ps::cuda {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

int32_t dtype_bytes(DType t) {
  return t == DType::f32 ? 4 : 2;
}

float philox_uniform(uint64_t seed, uint64_t step, uint32_t index) {
  return philox_uniform_at(seed, step, index);
}

}  // namespace ps::cuda
