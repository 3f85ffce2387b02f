#pragma once
// Test-side plumbing for kernel_test.cu: dtype rounding on the host, device buffers that are
// poisoned (all bytes 0xFF: NaN in every float type) before each run, and a pass/fail ledger
// whose comparisons never let a NaN pass.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/kernels.h"

namespace ps::cuda::test {

inline void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "kernel_test: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

inline float round_to(DType t, float v) {
  if (t == DType::f16) return __half2float(__float2half_rn(v));
  if (t == DType::bf16) return __bfloat162float(__float2bfloat16_rn(v));
  return v;
}

// Device copy of a float vector stored as dtype t.
struct DevBuf {
  DType t = DType::f32;
  size_t n = 0;
  void* p = nullptr;
  DevBuf(DType type, size_t count) : t(type), n(count) {
    ck(cudaMalloc(&p, bytes() ? bytes() : 1), "cudaMalloc");
    poison();
  }
  DevBuf(DType type, const std::vector<float>& host) : DevBuf(type, host.size()) { upload(host); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  size_t bytes() const { return n * size_t(dtype_bytes(t)); }
  void poison() { ck(cudaMemset(p, 0xFF, bytes()), "poison"); }
  void upload(const std::vector<float>& h) {
    std::vector<unsigned char> raw(bytes());
    for (size_t i = 0; i < n; ++i) {
      if (t == DType::f32) std::memcpy(&raw[i * 4], &h[i], 4);
      if (t == DType::f16) {
        const __half v = __float2half_rn(h[i]);
        std::memcpy(&raw[i * 2], &v, 2);
      }
      if (t == DType::bf16) {
        const __nv_bfloat16 v = __float2bfloat16_rn(h[i]);
        std::memcpy(&raw[i * 2], &v, 2);
      }
    }
    ck(cudaMemcpy(p, raw.data(), bytes(), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<float> download() const {
    std::vector<unsigned char> raw(bytes());
    ck(cudaMemcpy(raw.data(), p, bytes(), cudaMemcpyDeviceToHost), "download");
    std::vector<float> h(n);
    for (size_t i = 0; i < n; ++i) {
      if (t == DType::f32) std::memcpy(&h[i], &raw[i * 4], 4);
      if (t == DType::f16) {
        __half v;
        std::memcpy(&v, &raw[i * 2], 2);
        h[i] = __half2float(v);
      }
      if (t == DType::bf16) {
        __nv_bfloat16 v;
        std::memcpy(&v, &raw[i * 2], 2);
        h[i] = __bfloat162float(v);
      }
    }
    return h;
  }
};

template <typename I>
struct DevInts {
  size_t n;
  I* p = nullptr;
  explicit DevInts(const std::vector<I>& h) : n(h.size()) {
    ck(cudaMalloc(&p, n * sizeof(I) + 1), "cudaMalloc");
    ck(cudaMemcpy(p, h.data(), n * sizeof(I), cudaMemcpyHostToDevice), "upload");
  }
  ~DevInts() { cudaFree(p); }
  DevInts(const DevInts&) = delete;
  DevInts& operator=(const DevInts&) = delete;
  std::vector<I> download() const {
    std::vector<I> h(n);
    ck(cudaMemcpy(h.data(), p, n * sizeof(I), cudaMemcpyDeviceToHost), "download");
    return h;
  }
};

// Relative error bound per dtype: the output is rounded to the dtype once, plus fp32 arithmetic.
struct Tol {
  double rtol, atol;
};
inline Tol tol_for(DType t) {
  if (t == DType::bf16) return {1.6e-2, 1e-2};
  if (t == DType::f16) return {2e-3, 1e-3};
  return {2e-4, 1e-5};
}

struct Ledger {
  int passed = 0, failed = 0;
  // Compares elementwise; |got - want| <= atol + rtol * |want|, written so NaN fails.
  void close(const std::string& name, const std::vector<float>& got, const std::vector<float>& want,
             Tol tol) {
    size_t bad = 0, first = 0;
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const double err = std::fabs(double(got[i]) - want[i]);
      const double bound = tol.atol + tol.rtol * std::fabs(want[i]);
      if (!(err <= bound)) {
        if (bad++ == 0) first = i;
      }
      if (err / bound > worst || std::isnan(err)) worst = std::isnan(err) ? INFINITY : err / bound;
    }
    if (bad == 0) {
      ++passed;
      std::printf("PASS %-40s %zu values, worst error %.2f of bound\n", name.c_str(), want.size(),
                  worst);
    } else {
      ++failed;
      std::printf("FAIL %-40s %zu of %zu values out of bound; first at %zu: got %g want %g\n",
                  name.c_str(), bad, want.size(), first, double(got[first]), double(want[first]));
    }
  }
  void expect(const std::string& name, bool ok, const std::string& detail) {
    ok ? ++passed : ++failed;
    std::printf("%s %-40s %s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.c_str());
  }
};

}  // namespace ps::cuda::test
