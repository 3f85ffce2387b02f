#include "app/bench_floors.h"

#include <algorithm>
#include <cstdio>

#include "kernels/machine_probe.h"

namespace ps::bench_cli {

double prefill_flops(const ModelConfig& c, int64_t tokens) {
  const double n = static_cast<double>(tokens);
  const int32_t attention_layers = c.num_hidden_layers - c.num_linear_layers();
  return n * static_cast<double>(matmul_flops_per_token(c)) +
         2.0 * n * n * static_cast<double>(c.q_size()) * attention_layers;
}

nlohmann::json print_floors(const ModelConfig& c, const ModeResult& cont, const ModeResult* single,
                            double bytes, ComputeDtype compute) {
  // Bandwidth over a buffer the size of the weights: what one decode step reads (from L3 where
  // the model fits in it, from DRAM where it does not).
  const MachineLimits m = probe_machine(static_cast<int64_t>(bytes), compute);
  const double flops = static_cast<double>(matmul_flops_per_token(c));
  const double read_s = bytes / (m.read_bandwidth_gbs * 1e9);
  // The peak of the dtype the projections compute in: bf16 dot products, or fp32.
  const bool bf16 = compute == ComputeDtype::bf16 && m.bf16_gemm_gflops > 0;
  const bool int8 = compute == ComputeDtype::int8 && m.int8_gemm_gops > 0;
  const double peak_gflops = bf16 ? m.bf16_gemm_gflops : int8 ? m.int8_gemm_gops : m.gemm_gflops;
  const char* peak_name = bf16   ? "bf16 dot products (--compute-dtype bfloat16)"
                          : int8 ? "int8 dot products (--compute-dtype int8)"
                                 : "fp32";
  const double flop_s = flops / (peak_gflops * 1e9);
  std::printf(
      "machine: read bandwidth %.1f GB/s (%.0f MB buffer), fp32 GEMM %.1f GFLOP/s (best of "
      "OpenBLAS %.1f and packed-%s %.1f)",
      m.read_bandwidth_gbs, m.bandwidth_buffer_bytes / 1e6, m.gemm_gflops, m.blas_gemm_gflops,
      m.packed_isa.c_str(), m.packed_gemm_gflops);
  if (m.bf16_gemm_gflops > 0)
    std::printf(", bf16 dot-product GEMM %.1f GFLOP/s", m.bf16_gemm_gflops);
  if (m.int8_gemm_gops > 0) std::printf(", int8 dot-product GEMM %.1f GOP/s", m.int8_gemm_gops);
  std::printf("\ncompute floors below: %s\n", peak_name);
  std::printf("model: %.1f MB of weights read per token, %.1f MFLOP per token (matmuls)\n",
              bytes / 1e6, flops / 1e6);
  nlohmann::json report = {{"read_bandwidth_gbs", m.read_bandwidth_gbs},
                           {"bandwidth_buffer_bytes", m.bandwidth_buffer_bytes},
                           {"gemm_gflops", m.gemm_gflops},
                           {"blas_gemm_gflops", m.blas_gemm_gflops},
                           {"packed_gemm_gflops", m.packed_gemm_gflops},
                           {"packed_isa", m.packed_isa},
                           {"bf16_gemm_gflops", m.bf16_gemm_gflops},
                           {"int8_gemm_gops", m.int8_gemm_gops},
                           {"compute_dtype", bf16   ? "bfloat16"
                                             : int8 ? "int8"
                                                    : "float32"},
                           {"weight_bytes", bytes},
                           {"matmul_flops_per_token", flops},
                           {"bandwidth_floor_tok_s", 1.0 / read_s},
                           {"compute_floor_tok_s", 1.0 / flop_s}};
  if (single != nullptr) {
    std::printf(
        "bandwidth floor (batch-1 decode): %.1f tok/s; single-request decode reaches "
        "%.0f%% of it (1/TPOT = %.1f tok/s)\n",
        1.0 / read_s, 100.0 * read_s / single->mean_tpot_s, 1.0 / single->mean_tpot_s);
  }
  std::printf(
      "compute floor (large batch): %.1f tok/s; continuous batching reaches %.0f%% of "
      "it in total tokens/s\n",
      1.0 / flop_s, 100.0 * cont.total_tok_s() * flop_s);
  // Decode at the batch the run reached: each of B sequences gains a token per step, so B / TPOT
  // is the decode rate while they all run, against B over the step's floor.
  const int32_t b = cont.max_seqs_in_step;
  if (b > 1 && cont.mean_tpot_s > 0) {
    const double step_floor_s = std::max(read_s, b * flop_s);
    const double floor_tok_s = b / step_floor_s;
    const double measured = b / cont.mean_tpot_s;
    std::printf(
        "decode at %d seqs: floor %.1f tok/s (a step reads the weights in %.1f ms and "
        "computes %d tokens in %.1f ms); %d / TPOT = %.1f tok/s, %.0f%% of it\n",
        b, floor_tok_s, read_s * 1e3, b, b * flop_s * 1e3, b, measured,
        100.0 * measured / floor_tok_s);
    report["decode_batch"] = b;
    report["decode_floor_tok_s"] = floor_tok_s;
    report["decode_tok_s"] = measured;
  }
  // One request: its TTFT is the prompt's prefill (and one sample).
  if (cont.requests == 1 && cont.mean_ttft_s > 0) {
    const double floor_s = prefill_flops(c, cont.prompt_tokens) / (peak_gflops * 1e9);
    std::printf(
        "prefill of %lld tokens: %.2f s (%.1f tok/s); compute floor (matmuls + attention) "
        "%.2f s, %.0f%% of it\n",
        static_cast<long long>(cont.prompt_tokens), cont.mean_ttft_s,
        cont.prompt_tokens / cont.mean_ttft_s, floor_s, 100.0 * floor_s / cont.mean_ttft_s);
    report["prefill_tokens"] = cont.prompt_tokens;
    report["prefill_s"] = cont.mean_ttft_s;
    report["prefill_floor_s"] = floor_s;
  }
  return report;
}

}  // namespace ps::bench_cli
