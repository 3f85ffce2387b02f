#pragma once
// The in-run floors `bench offline` holds a run to (issues #14, #38), each from this machine's
// limits measured in the same process (kernels/machine_probe.h): a decode step of B sequences
// cannot take less than max(weight bytes / read bandwidth, B x matmul FLOPs / GEMM peak), and a
// prompt of N tokens cannot prefill faster than its matmul and attention FLOPs over that peak.
// The peak is that of the dtype the projections compute in: fp32 (the faster of OpenBLAS and our
// kernel), or our bf16 dot products under --compute-dtype bfloat16. Printed beside the measured
// figures, with the share of the floor each reaches.
#include <nlohmann/json.hpp>

#include "bench/offline_bench.h"
#include "model/model_config.h"
#include "model/model_dtype.h"

namespace ps::bench_cli {

// Probes the machine and prints the floors of `cont` (decode at the batch it reached; prefill
// when it ran one request) and of `single` (batch-1 decode, nullptr when skipped). Returns the
// report's "machine" object. `bytes_per_token`: weight bytes one decode step reads.
nlohmann::json print_floors(const ModelConfig& config, const ModeResult& cont,
                            const ModeResult* single, double bytes_per_token,
                            ComputeDtype compute = ComputeDtype::f32);

// Matmul plus causal attention FLOPs of prefilling one prompt of `tokens` tokens: attention
// adds 2 N^2 (q heads x head_dim) per full- or sliding-attention layer (QK^T and PV over the
// causal half), linear-attention layers none beyond their projections.
double prefill_flops(const ModelConfig& config, int64_t tokens);

}  // namespace ps::bench_cli
