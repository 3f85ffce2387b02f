#pragma once
// Owned device and pinned host allocations for the CUDA executor: plain cudaMalloc /
// cudaMallocHost (never managed memory), grow-only, freed on destruction. Host C++ header over
// the CUDA runtime's C API; included by cuda/*.cpp only.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ps::cuda {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
  }
}

// Grow-only: reserve(n) keeps the allocation when it already holds n bytes, else frees it and
// allocates n (the old contents are not kept). An allocation failure names what it was for.
template <bool kPinned>
class CudaAllocation {
 public:
  CudaAllocation() = default;
  ~CudaAllocation() { release(); }
  CudaAllocation(const CudaAllocation&) = delete;
  CudaAllocation& operator=(const CudaAllocation&) = delete;

  void reserve(int64_t bytes, const char* what) {
    if (bytes <= bytes_) return;
    release();
    void* p = nullptr;
    const cudaError_t e =
        kPinned ? cudaMallocHost(&p, size_t(bytes)) : cudaMalloc(&p, size_t(bytes));
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw std::runtime_error(std::string(kPinned ? "cudaMallocHost" : "cudaMalloc") + " of " +
                               std::to_string(bytes >> 20) + " MiB for " + what +
                               " failed: " + cudaGetErrorString(e));
    }
    p_ = p;
    bytes_ = bytes;
  }
  void* get() const { return p_; }
  int64_t bytes() const { return bytes_; }

 private:
  void release() {
    if (p_ != nullptr) {
      if (kPinned) {
        cudaFreeHost(p_);
      } else {
        cudaFree(p_);
      }
    }
    p_ = nullptr;
    bytes_ = 0;
  }
  void* p_ = nullptr;
  int64_t bytes_ = 0;
};

using DeviceMemory = CudaAllocation<false>;
using PinnedMemory = CudaAllocation<true>;

}  // namespace ps::cuda
