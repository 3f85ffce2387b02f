#pragma once
// The packed kernels' prefetch of the next panel (packed_kernel_avx2.cpp,
// packed_kernel_avx512.cpp). Static functions: each kernel file, compiled for its own ISA, gets a
// private copy, so the linker never picks one ISA's copy for the other (see the kernels' notes on
// headers).
#include <xmmintrin.h>

#include <cstdint>

#include "kernels/packed_kernels.h"

namespace ps {

// The next panel of this thread, brought into L2 while the rows make their passes over this
// one, spread evenly over those passes' k-steps (two prefetches a step: 128 bytes a step in one
// pass of f32, else mostly the same line twice). Without it each panel's first pass waited on
// DRAM, as 2 KB ahead is only ~16 steps: at M = 64, on the default model's weights streamed
// from memory, the up and lm_head shapes ran at ~210 GFLOP/s against ~300 for a weight held in
// L2; with it ~300 (bench_model_linear, bench/README.md). Spreading mattered: a line a step
// (the whole panel in the first two passes) gave ~265, and 128 bytes a step in every pass
// less still. int8 panels go without: their widening, not memory, bounds them, and the extra
// instructions made bench_model_lowbit_linear's int8 layers 3-10% slower.
struct NextPanel {
  const char* at;
  const char* end;
  int64_t stride;  // bytes per k-step
};
__attribute__((always_inline)) static inline NextPanel next_panel(const PanelJob& j,
                                                                  int64_t passes) {
  const char* at = static_cast<const char*>(j.next_panel);
  if (at == nullptr) return {at, at, 0};
  const int64_t per_step = j.next_bytes / (passes * j.k) + 1;
  return {at, at + j.next_bytes, per_step < 128 ? per_step : 128};
}
__attribute__((always_inline)) static inline void prefetch_next(NextPanel& n) {
  if (n.at < n.end) {
    _mm_prefetch(n.at, _MM_HINT_T1);
    _mm_prefetch(n.at + n.stride / 2, _MM_HINT_T1);
    n.at += n.stride;
  }
}

}  // namespace ps
