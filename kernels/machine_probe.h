#pragma once
// Measures what this machine can do, so benchmark figures can be read as fractions of its own
// limits (issue: "hold the engine to the machine's own limits, measured in the same run").
#include <cstdint>
#include <string>

#include "model/model_config.h"
#include "model/model_dtype.h"

namespace ps {

struct MachineLimits {
  double read_bandwidth_gbs = 0;  // reading a buffer of bandwidth_buffer_bytes, all cores
  int64_t bandwidth_buffer_bytes = 0;
  // The compute floor: the faster of OpenBLAS sgemm and our packed kernel (active ISA) on one
  // large fp32 GEMM (512 x 2048 x 2048), all cores.
  double gemm_gflops = 0;
  double blas_gemm_gflops = 0, packed_gemm_gflops = 0;
  // The same GEMM on the bf16 dot products (--compute-dtype bfloat16), where the active ISA has
  // them (AVX512_BF16 on avx512) and the probe was asked for them; 0 elsewhere.
  double bf16_gemm_gflops = 0;
  // And on the int8 dot products (--compute-dtype int8), activations quantized in the timing,
  // where AVX512_VNNI is and the probe was asked; 0 elsewhere. Multiply-adds count 2 operations,
  // as FLOPs do.
  double int8_gemm_gops = 0;
  std::string packed_isa;
};

// working_set_bytes: the buffer the bandwidth is read over (0: 512 MiB, past any L3 here).
// Give the model's weight bytes to get the bandwidth a decode step actually sees: on a host
// whose L3 holds the whole model, repeated steps read it from L3. At least 32 MiB. `compute`:
// the dtype the run multiplies in; its dot-product GEMM is timed beside fp32's (where the
// active ISA has the unit), the other one is not (about a second each of a bench run's time).
MachineLimits probe_machine(int64_t working_set_bytes = 0,
                            ComputeDtype compute = ComputeDtype::f32);

// Read bandwidth (GB/s, all cores, best of 5) over a buffer of `bytes` (at least 1 MiB).
double measure_read_bandwidth(int64_t bytes);

// fp32 bytes of all weights, and matmul FLOPs per token (2 per weight that a token multiplies;
// the embedding lookup is a gather, not a matmul; attention is excluded and noted as such).
int64_t weight_bytes(const ModelConfig& c);
int64_t matmul_flops_per_token(const ModelConfig& c);

}  // namespace ps
