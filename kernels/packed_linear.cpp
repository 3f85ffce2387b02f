#include "kernels/packed_linear.h"
#include "kernels/parallel_for.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/packed_kernels.h"

namespace ps {
namespace {

// Input rows per block of the parallel split: a [kRowChunk, k] slice of x (128-720 KB for
// k = 256..1408) stays in L2 while the thread's panels stream past it.
constexpr int64_t kRowChunk = 128;

// Rows per chunk for m rows: at most kRowChunk, the chunks as equal as multiples of 4 allow.
// Each thread takes an equal share of (chunk, panel) units, so a short last chunk left its
// thread idle for the difference: 720 rows (16 prompts of 45) split 128 x 5 + 80 gave one of two
// threads 384 rows and the other 336; as 120 x 6 both get 360 (and 120 is ten whole 12-row
// tiles). A row's result does not depend on its chunk: every output is one chain over k in order.
int64_t row_chunk(int64_t m) {
  const int64_t chunks = (m + kRowChunk - 1) / kRowChunk;
  if (chunks == 1) return m;
  return std::min(kRowChunk, ((m + chunks - 1) / chunks + 3) / 4 * 4);
}

using PanelFn = void (*)(const PanelJob&);

// A single-pass tile's 2 KB-ahead prefetch (PanelJob::single_pass_prefetch). On an AMD EPYC
// (Zen 3, AVX2 only) M = 1 took 1.3-2.3x the time with it as without (bench/README.md "Kernels
// per ISA"). On the Intel host it was added on, it measured a gain, so other vendors keep it.
bool single_pass_prefetch() {
#if PS_X86_KERNELS
  static const bool on = [] {
    __builtin_cpu_init();
    return !__builtin_cpu_is("amd");
  }();
  return on;
#else
  return true;
#endif
}

PanelFn kernel_for(KernelIsa isa) {
#if PS_X86_KERNELS
  if (isa == KernelIsa::avx512) return panel_avx512;
  if (isa == KernelIsa::avx2) return panel_avx2;
#endif
  (void)isa;
  return panel_generic;
}

// Panels per job (PanelJob::span): at one row the AVX-512 widening kernel runs four panels' FMA
// chains side by side (two at two rows), the AVX2 one two fp32 panels'; 1 wherever else.
// Measured and left out (bench_model_lowbit_linear 1 2, AMD EPYC): the dot-product kernels
// (bf16-dot 0.73 vs 0.73 ms a layer, i8-dot 0.44 vs 0.46) and AVX2's narrow formats (bf16 0.73 /
// 0.91 vs 0.85 / 0.89 ms, int8 0.48 / 0.58 vs 0.62 / 0.61: there the widening, not the latency,
// is the bound). int8 per group and MXFP4 multiply or decode per weight vector: not spanned.
int64_t span_panels(int64_t m, const PackedWeight& w, PanelFn fn) {
#if PS_X86_KERNELS
  const PanelFormat f = w.format();
  const bool widening = f == PanelFormat::f32 || f == PanelFormat::bf16 || f == PanelFormat::f16 ||
                        (f == PanelFormat::i8 && w.group() >= w.k());
  if (fn == panel_avx512 && widening && m <= 2) return m == 1 ? 4 : 2;
  if (fn == panel_avx2 && f == PanelFormat::f32 && m == 1) return 2;
#endif
  (void)m, (void)w, (void)fn;
  return 1;
}

PackedLinearArgs with_dense_strides(PackedLinearArgs a) {
  if (a.w == nullptr || a.w->empty()) throw std::invalid_argument("packed_linear: no weight");
  if (a.ldx == 0) a.ldx = a.w->k();
  if (a.ldy == 0) a.ldy = a.w->n();
  if (a.m < 0 || a.ldx < a.w->k() || a.ldy < a.w->n() || !a.x || !a.y) {
    throw std::invalid_argument("packed_linear: bad shape or null pointer");
  }
  return a;
}

// The call's rows in the operand form of the dot-product panels, made once per call rather than
// once per panel: rounded to bf16 (bf16_pairs) or quantized to int8 with a scale per row
// (i8_quads). All null for the widening formats.
struct NarrowRows {
  const uint16_t* xh = nullptr;
  int64_t ldxh = 0;
  const uint8_t* xq = nullptr;
  int64_t ldxq = 0;
  const float* x_scales = nullptr;
};

// Fills `buffer` with m rows `ld` apart, convert(r0, r1, rows r0.. of the buffer) in parallel.
// The buffers are the calling thread's thread_locals, reached through the pointer handed to
// `convert`: one named inside a worker would be that worker's own (empty) buffer.
template <typename T, typename Convert>
T* convert_rows(std::vector<T>& buffer, int64_t m, int64_t ld, int64_t k, const Convert& convert) {
  buffer.resize(size_t(m * ld));
  T* out = buffer.data();
  parallel_for(0, m, std::max<int64_t>(1, 65536 / k),
               [&](int64_t r0, int64_t r1) { convert(r0, r1, out + r0 * ld); });
  return out;
}

// Checks the dot-product unit of w's format on `isa` and points `fn` at its kernel; then the rows.
NarrowRows narrow_rows(const PackedLinearArgs& a, KernelIsa isa, PanelFn& fn) {
  const PackedWeight& w = *a.w;
  const PanelFormat f = w.format();
  NarrowRows n;
  if (f != PanelFormat::bf16_pairs && f != PanelFormat::i8_quads) return n;
  const bool bf16 = f == PanelFormat::bf16_pairs;
  const auto refusal = [f](const char* need) {
    return std::invalid_argument(std::string("packed_linear: ") + panel_format_name(f) +
                                 " panels need " + need);
  };
#if PS_X86_KERNELS
  // The int8 dot products run on the avx2 ISA's kernel (AVX-VNNI) when the call is on that ISA,
  // else (generic included: the loader refuses it, a direct call falls through) on the avx512
  // one's; the bf16 ones on avx512 alone.
  const bool on_avx2 = isa == KernelIsa::avx2;
  const KernelIsa unit_isa = on_avx2 ? KernelIsa::avx2 : KernelIsa::avx512;
  if (bf16 ? !cpu_has_avx512_bf16() : !int8_dot_products_on(unit_isa)) {
    throw refusal(bf16 ? "avx512_bf16" : int8_dot_unit(unit_isa));
  }
  const int64_t k = w.k();
  thread_local std::vector<uint16_t> xh_buffer;
  thread_local std::vector<uint8_t> xq_buffer;
  thread_local std::vector<float> scales_buffer;
  if (bf16) {
    fn = panel_avx512_bf16;
    n.ldxh = (k + 1) / 2 * 2;
    n.xh = convert_rows(xh_buffer, a.m, n.ldxh, k, [&](int64_t r0, int64_t r1, uint16_t* out) {
      round_rows_to_bf16(a.x + r0 * a.ldx, a.ldx, r1 - r0, k, out, n.ldxh);
    });
  } else {
    fn = on_avx2 ? panel_avx2_vnni : panel_avx512_vnni;
    const auto quantize = on_avx2 ? quantize_rows_u8_avx2 : quantize_rows_u8;
    n.ldxq = (k + 3) / 4 * 4;
    scales_buffer.resize(size_t(a.m));
    float* scales = scales_buffer.data();
    n.x_scales = scales;
    n.xq = convert_rows(xq_buffer, a.m, n.ldxq, k, [&](int64_t r0, int64_t r1, uint8_t* out) {
      quantize(a.x + r0 * a.ldx, a.ldx, r1 - r0, k, out, n.ldxq, scales + r0);
    });
  }
  return n;
#else
  (void)bf16;
  (void)isa;
  (void)fn;
  throw refusal("the x86 kernels");
#endif
}

void run(const PackedLinearArgs& args, KernelIsa isa) {
  const PackedLinearArgs a = with_dense_strides(args);
  if (a.m == 0) return;
  const PackedWeight& w = *a.w;
  PanelFn fn = kernel_for(isa);
  const NarrowRows narrow = narrow_rows(a, isa, fn);
  const int64_t panels = w.panels();
  const int64_t chunk_rows = row_chunk(a.m);
  const int64_t chunks = (a.m + chunk_rows - 1) / chunk_rows;
  // Work unit u = (row chunk u / panels, panel u % panels): a thread's contiguous range of
  // units reuses its x chunk across many panels. Below ~256k multiply-adds per unit range,
  // waking the other threads costs more than it saves. With few rows the work is reading the
  // weight, not multiplying: count it as at least 4 rows, so a 1 MB weight at M = 1 (an o_proj
  // of the default model) is still read by every core (it ran on one, at one core's bandwidth).
  const int64_t rows = std::max<int64_t>(4, chunk_rows);
  const int64_t grain = std::max<int64_t>(1, 262144 / (rows * kPanelCols * w.k()));
  const bool ahead = single_pass_prefetch();
  const int64_t span = span_panels(a.m, w, fn);
  parallel_for(0, chunks * panels, grain, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1;) {
      const int64_t r0 = (u / panels) * chunk_rows;
      const int64_t col = (u % panels) * kPanelCols;
      PanelJob j;
      j.x = a.x + r0 * a.ldx;
      j.ldx = a.ldx;
      j.panel = w.panel_data(u % panels);
      j.format = w.format();
      j.scales = w.panel_scales(u % panels);
      j.exponents = w.panel_exponents(u % panels);
      j.group = w.group();
      j.k = w.k();
      if (narrow.xh != nullptr) {
        j.xh = narrow.xh + r0 * narrow.ldxh;
        j.ldxh = narrow.ldxh;
      }
      if (narrow.xq != nullptr) {
        j.xq = narrow.xq + r0 * narrow.ldxq;
        j.ldxq = narrow.ldxq;
        j.x_scales = narrow.x_scales + r0;
        j.col_sums = w.panel_col_sums(u % panels);
      }
      j.y = a.y + r0 * a.ldy + col;
      j.ldy = a.ldy;
      j.bias = a.bias != nullptr ? a.bias + col : nullptr;
      j.rows = std::min(a.m, r0 + chunk_rows) - r0;
      j.accumulate = a.accumulate;
      j.single_pass_prefetch = ahead;
      // span > 1 means one row chunk (m <= 2), so units u.. are consecutive panels.
      j.span = int32_t(std::min(span, u1 - u));
      if (j.span > 1) {
        j.panel_stride = w.panel_bytes();
        j.scale_stride = w.groups() * kPanelCols;
      } else if (j.rows > 2 && u + 1 < u1 && (u + 1) % panels != u % panels) {
        // One or two rows read the panel in one pass, which its 2 KB-ahead prefetch already
        // covers: the next panel's L2 prefetch only doubled the requests. Without it the dot
        // products at M = 1 took 0.74 / 0.70 ms a layer against 0.89 / 0.78 (bf16) and 0.38 /
        // 0.36 against 0.50 / 0.45 (int8), A/B alternated (bench_model_lowbit_linear 1, AMD
        // EPYC, avx512).
        j.next_panel = w.panel_data((u + 1) % panels);
        j.next_bytes = w.panel_bytes();
      }
      const int64_t last_col = col + (j.span - 1) * kPanelCols;
      j.cols = int32_t(std::min(kPanelCols, w.n() - last_col));
      fn(j);
      u += j.span;
    }
  });
}

}  // namespace

void PackedWeight::Free::operator()(void* p) const {
  std::free(p);
}

PackedWeight::PackedWeight(const float* w, int64_t n, int64_t k) : n_(n), k_(k), group_(k) {
  if (w == nullptr || n <= 0 || k <= 0) throw std::invalid_argument("PackedWeight: bad shape");
  const size_t bytes = size_t(panels() * kPanelCols * k) * sizeof(float);
  void* mem = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (mem == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<uint8_t*>(mem));
  float* out = reinterpret_cast<float*>(data_.get());
  parallel_for(0, panels(), 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* dst = out + p * kPanelCols * k;
      for (int64_t j = 0; j < kPanelCols; ++j) {
        const int64_t col = p * kPanelCols + j;
        for (int64_t q = 0; q < k; ++q) dst[q * kPanelCols + j] = col < n ? w[col * k + q] : 0.f;
      }
    }
  });
}

void packed_linear(const PackedLinearArgs& args) {
  run(args, active_kernel_isa());
}

const char* packed_linear_isa() {
  return kernel_isa_name(active_kernel_isa());
}

bool packed_linear_on(const PackedLinearArgs& args, KernelIsa isa) {
  if (!cpu_can_run(isa)) return false;
  // The bf16 dot products exist on the avx512 path alone (panel_avx512_bf16), the int8 ones on
  // avx512 and avx2 where the CPU has the unit (panel_avx512_vnni, panel_avx2_vnni).
  if (args.w != nullptr && args.w->format() == PanelFormat::bf16_pairs &&
      !bf16_dot_products_on(isa)) {
    return false;
  }
  if (args.w != nullptr && args.w->format() == PanelFormat::i8_quads &&
      !int8_dot_products_on(isa)) {
    return false;
  }
  run(args, isa);
  return true;
}

}  // namespace ps
