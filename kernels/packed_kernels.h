#pragma once
// The micro-kernels of packed_linear (packed_linear.h), one file per instruction set. Each
// computes rows [0, rows) of x against one weight panel (kPanelCols output columns, k-major)
// with its accumulators held in registers for the whole k loop; the caller splits the work.
//
// Every output element is one FMA chain over p = 0..k-1 from zero, then + bias, then + old y,
// whatever the tile height: a row's result does not depend on how many rows share the call
// (the engine's batch invariance rests on it).
//
// A panel holds fp32, bf16, f16, int8 or MXFP4 weights (PanelFormat). The narrow ones are widened
// to fp32 in registers as they are loaded, so a kernel's result equals the fp32 kernel's on the
// widened weights bit for bit; only the bytes read differ. int8 per group of k-steps is also
// multiplied by its group's scale as it is loaded. int8 per output channel (one group spanning
// k) is not: the chain runs over the integers and its end is scaled once, as
// fma(chain, scale, bias or 0), then + old y. That saves a multiply per weight vector (batch-1
// int8 decode 6-9% faster, bench/README.md) and rounds once instead of k times.
#include <cstdint>

#include "kernels/kernel_isa.h"

namespace ps {

// bf16_pairs: bf16 weights with each column's k-steps 2p and 2p + 1 side by side, the operand
// layout of `vdpbf16ps` (--compute-dtype bfloat16: panel_avx512_bf16 alone runs it).
// i8_quads: int8 per output channel with each column's k-steps 4p..4p+3 side by side, the
// operand layout of `vpdpbusd` (--compute-dtype int8: panel_avx512_vnni on the avx512 ISA,
// panel_avx2_vnni on the avx2 one).
enum class PanelFormat : uint8_t { f32, bf16, f16, i8, mxfp4, bf16_pairs, i8_quads };

struct PanelJob {
  const float* x = nullptr;  // first input row of the job
  int64_t ldx = 0;
  // kPanelCols * k elements of `format`: panel[p * kPanelCols + j].
  const void* panel = nullptr;
  PanelFormat format = PanelFormat::f32;
  // i8 only: scale[g * kPanelCols + j] multiplies the weights of column j at k-steps
  // [g * group, (g + 1) * group); group = k is one scale per output channel.
  const float* scales = nullptr;
  int64_t group = 0;
  // mxfp4 only: the panel is 16 bytes a k-step (byte i: column i in its low nibble, column
  // i + 16 in its high one, E2M1 codes) and exponents[g * kPanelCols + j] is the E8M0 scale of
  // column j at k-steps [32 g, 32 g + 32) (kernels/mxfp4.h). Widened weights are exact, so the
  // result is the fp32 kernel's on the dequantized matrix, bit for bit.
  const uint8_t* exponents = nullptr;
  int64_t k = 0;
  // bf16_pairs only: the job's input rows rounded to bf16 (round_rows_to_bf16), ldxh elements
  // apart, each padded with a zero to an even length.
  const uint16_t* xh = nullptr;
  int64_t ldxh = 0;
  // i8_quads only: the job's input rows quantized to int8 plus 128 (quantize_rows_u8), ldxq
  // bytes apart, with each row's scale in x_scales[row]; col_sums[j]: column j's integer
  // weights summed over k. `scales` holds one scale per column.
  const uint8_t* xq = nullptr;
  int64_t ldxq = 0;
  const float* x_scales = nullptr;
  const int32_t* col_sums = nullptr;
  float* y = nullptr;  // output at (first row, the panel's first column)
  int64_t ldy = 0;
  const float* bias = nullptr;  // at the panel's first column, or nullptr
  int64_t rows = 0;
  int32_t cols = 0;         // valid columns of the panel, 1..kPanelCols
  bool accumulate = false;  // y += result instead of y = result
  // The panel this thread multiplies next (nullptr if none) and its bytes. The x86 kernels
  // prefetch it into L2 over this panel's passes, so its first pass does not wait on DRAM
  // (kernels/panel_prefetch.h; not for int8 panels). Not set for one or two rows (one pass).
  const void* next_panel = nullptr;
  int64_t next_bytes = 0;
  // Whether a tile that reads the panel once (the AVX2 kernel at 1-3 rows) also prefetches 2 KB
  // ahead of itself. On an AMD EPYC (Zen 3) that prefetch made M = 1 slower (1.3-2.3x the time
  // on the default model's shapes), the hardware prefetcher alone doing better; the Intel
  // host measured a gain from it. Set by vendor in packed_linear.cpp.
  bool single_pass_prefetch = true;
  // Panels this job covers (panel_avx512 and panel_avx2 take more than 1; packed_linear.cpp
  // says at which row counts and formats): panel i of the span starts
  // panel_stride bytes after panel i - 1, its scales scale_stride floats after, its y and bias i *
  // kPanelCols columns on; every panel but the last is whole, `cols` is the last one's. One row's
  // tile is a single FMA chain per output vector, so it ran at the FMA's latency, not at the rate
  // the weights arrive; a span runs its panels' chains side by side. Each output is still one chain
  // over k in order, so the result is the single panel's, bit for bit.
  int32_t span = 1;
  int64_t panel_stride = 0;
  int64_t scale_stride = 0;
};

void panel_generic(const PanelJob& job);
#if PS_X86_KERNELS
void panel_avx2(const PanelJob& job);    // 6x16 register tile, 12 of 16 ymm registers
void panel_avx512(const PanelJob& job);  // 12x32 register tile, 24 of 32 zmm registers
// bf16_pairs panels by `vdpbf16ps` (AVX512_BF16): per row and column one fp32 chain over the
// k-pairs in order, each step adding the pair's two exact bf16 products, whatever the tile
// height (so a row's result does not depend on the batch). 12x32 tile as panel_avx512's.
void panel_avx512_bf16(const PanelJob& job);
// out[r, 0..k) = x[r, 0..k) rounded to bf16 (nearest even), out[r, k] = 0 when k is odd; rows
// ldx and ldo elements apart. The activations of a bf16_pairs product.
void round_rows_to_bf16(const float* x, int64_t ldx, int64_t m, int64_t k, uint16_t* out,
                        int64_t ldo);
// i8_quads panels by `vpdpbusd` (AVX512_VNNI): exact int32 sums, scaled once per output as
// (sum - 128 colsum) * row scale * column scale (+ bias) (+ y). 12x32 tile.
void panel_avx512_vnni(const PanelJob& job);
// Per row r: scales[r] = max|x[r, 0..k)| / 127 and out[r, c] = round(x / scale) + 128 (nearest
// even, clamped to [-127, 127] first), as the weights are quantized; padded with 128 (zero) up to
// a multiple of 4. Rows ldx and ldo elements apart.
void quantize_rows_u8(const float* x, int64_t ldx, int64_t m, int64_t k, uint8_t* out, int64_t ldo,
                      float* scales);
// The same two on the avx2 ISA with AVX-VNNI (the VEX `vpdpbusd`): 6x16 tile, two passes a panel;
// the same bytes and the same results bit for bit.
void panel_avx2_vnni(const PanelJob& job);
void quantize_rows_u8_avx2(const float* x, int64_t ldx, int64_t m, int64_t k, uint8_t* out,
                           int64_t ldo, float* scales);
#endif

}  // namespace ps
