// Batch-1 (and small-M) weight streaming of the packed linear at each weight format (mxfp4:
// gpt-oss's expert format, quantized here from the same matrices), on the
// projection shapes of Qwen3-0.6B (qkv 1024 -> 4096, o 2048 -> 1024, gate/up 1024 -> 6144,
// down 3072 -> 1024), measured side by side in one process: rounds interleave the formats, so
// a shared machine's load moves them together. Each format cycles through 8 layers' weights
// (larger than L3), as a decode step streams them. Prints, per format and M, the time per
// layer, the weight bytes read per second, and that as a share of the read bandwidth measured
// in the same rounds (best of 3, over a buffer the size of that format's layers).
//
//   build/bench/bench_model_lowbit_linear [M ...]        (default: 1 16 64)
//   PAGEDSERVE_KERNEL_ISA=avx2 build/bench/bench_model_lowbit_linear 1   (a narrower ISA's path)
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "kernels/kernel_isa.h"
#include "kernels/machine_probe.h"
#include "kernels/mxfp4.h"
#include "kernels/packed_linear.h"

namespace {

struct Format {
  const char* name;
  ps::PanelFormat format;
  int64_t group;
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  // All cores, as the engine runs (model_runner.cpp), unless OMP_NUM_THREADS says otherwise.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    at::set_num_threads(int(std::max(1u, std::thread::hardware_concurrency())));
  }
  std::vector<int64_t> ms;
  for (int i = 1; i < argc; ++i) ms.push_back(std::max(1L, std::atol(argv[i])));
  if (ms.empty()) ms = {1, 16, 64};
  const int64_t shapes[4][2] = {{4096, 1024}, {1024, 2048}, {6144, 1024}, {1024, 3072}};
  std::vector<Format> formats = {{"f32", ps::PanelFormat::f32, 0},
                                 {"bf16", ps::PanelFormat::bf16, 0},
                                 {"i8/channel", ps::PanelFormat::i8, 0},
                                 {"i8/g32", ps::PanelFormat::i8, 32},
                                 {"mxfp4", ps::PanelFormat::mxfp4, 32}};
  // bf16 and int8 dot products (--compute-dtype bfloat16 / int8) where the active ISA has them.
  if (ps::bf16_dot_products_on(ps::active_kernel_isa())) {
    formats.push_back({"bf16-dot", ps::PanelFormat::bf16_pairs, 0});
  }
  if (ps::int8_dot_products_on(ps::active_kernel_isa())) {
    formats.push_back({"i8-dot", ps::PanelFormat::i8_quads, 0});
  }
  const int kFormats = int(formats.size());
  constexpr int kLayers = 8, kRounds = 7;
  // weights[format][layer * 4 + shape], packed from the same random bf16 matrices.
  std::vector<std::vector<ps::PackedWeight>> weights(kFormats);
  for (int l = 0; l < kLayers; ++l) {
    for (const auto& s : shapes) {
      const at::Tensor w = at::randn({s[0], s[1]}).mul_(0.02).to(at::kBFloat16).contiguous();
      for (int f = 0; f < kFormats; ++f) {
        if (formats[f].format != ps::PanelFormat::mxfp4) {
          weights[f].emplace_back(w.data_ptr(), ps::PanelFormat::bf16, s[0], s[1],
                                  formats[f].format, formats[f].group);
          continue;
        }
        const at::Tensor w32 = w.to(at::kFloat).contiguous();
        std::vector<uint8_t> blocks(size_t(s[0] * s[1] / 2)), scales(size_t(s[0] * s[1] / 32));
        ps::mxfp4_quantize(w32.data_ptr<float>(), s[0], s[1], blocks.data(), scales.data());
        weights[f].emplace_back(ps::Mxfp4Matrix{blocks.data(), scales.data(), s[0], s[1]});
      }
    }
  }
  std::printf("packed linear, Qwen3-0.6B projection shapes, %d layers cycled, isa %s, %d threads\n",
              kLayers, ps::packed_linear_isa(), at::get_num_threads());
  for (const int64_t m : ms) {
    const at::Tensor x = at::randn({m, 3072});
    at::Tensor y = at::empty({m, 6144});
    std::vector<double> best(kFormats, 1e30), bw(kFormats, 0);
    for (int r = 0; r < kRounds; ++r) {
      for (int f = 0; f < kFormats; ++f) {
        const double t0 = now();
        for (const ps::PackedWeight& w : weights[f]) {
          ps::PackedLinearArgs a;
          a.x = x.data_ptr<float>();
          a.w = &w;
          a.y = y.data_ptr<float>();
          a.m = m;
          a.ldx = 3072;
          a.ldy = 6144;
          ps::packed_linear(a);
        }
        best[f] = std::min(best[f], (now() - t0) / kLayers);
        if (r % 3 == 0) {  // the bandwidth of a buffer this format's size, in the same rounds
          int64_t bytes = 0;
          for (int i = 0; i < 4; ++i) bytes += weights[f][i].bytes();
          bw[f] = std::max(bw[f], ps::measure_read_bandwidth(bytes * kLayers));
        }
      }
    }
    for (int f = 0; f < kFormats; ++f) {
      int64_t bytes = 0;
      for (int i = 0; i < 4; ++i) bytes += weights[f][i].bytes();
      const double gbs = double(bytes) / best[f] / 1e9;
      double flops = 0;  // per layer
      for (const auto& sh : shapes) flops += 2.0 * double(m) * double(sh[0]) * double(sh[1]);
      std::printf(
          "M %3ld  %-10s  %6.2f ms/layer  %6.1f MB/layer  %6.2f GB/s weights  read bandwidth %.2f "
          "GB/s  %3.0f%%  %6.1f GFLOP/s  speed vs f32 %.2fx\n",
          long(m), formats[f].name, best[f] * 1e3, bytes / 1e6, gbs, bw[f], 100.0 * gbs / bw[f],
          flops / best[f] / 1e9, best[0] / best[f]);
    }
  }
  return 0;
}
