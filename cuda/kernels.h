#pragma once
// Launchers for pagedserve's own CUDA kernels (docs/architecture.md §2, issue #10). Plain C++
// header: it names no CUDA type beyond the opaque stream handle, so torch-side .cpp files and the
// kernel test program include it without the CUDA headers. Every launcher takes raw device pointers
// and a stream, enqueues its work and returns; it throws std::invalid_argument on inconsistent
// shapes and std::runtime_error when the launch itself fails (message names the kernel).
//
// Layouts match the CPU path (kernels/paged_attention.h, cpu/runner_ops.h) so one StepPlan
// drives both: K and V cache per layer [num_blocks, block_size, num_kv_heads, head_dim];
// token position p of sequence s lives in block block_tables[s][p / block_size], slot
// p % block_size; packed rows are [T, ...] with explicit row strides (in elements).
#include <cstdint>

struct CUstream_st;  // cudaStream_t is CUstream_st*; nullptr is the legacy default stream.

namespace ps::cuda {

using Stream = CUstream_st*;

// Element type of activations, weights and the KV cache. Every kernel computes in fp32.
enum class DType : int32_t { f32 = 0, f16 = 1, bf16 = 2 };
const char* dtype_name(DType t);
int32_t dtype_bytes(DType t);

// ---- paged attention (decode and prefill chunks in one launch) --------------------------------
struct PagedAttentionArgs {
  DType dtype = DType::bf16;  // of q, the caches and out
  const void* q = nullptr;    // [T, num_heads, head_dim], q_row_stride elements apart
  int64_t q_row_stride = 0;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  const int32_t* block_tables = nullptr;  // [num_seqs, max_blocks_per_seq]
  int32_t max_blocks_per_seq = 0;
  const int32_t* query_start = nullptr;  // [num_seqs + 1], device
  const int32_t* context_len = nullptr;  // [num_seqs], device; includes this step's tokens
  int32_t num_seqs = 0;
  // Host-side bound on query_start[s+1] - query_start[s] (1 for a pure decode step): sizes the
  // grid without reading device memory. Rows past a sequence's real length are skipped.
  int32_t max_query_len = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;  // divides num_heads (GQA)
  int32_t head_dim = 0;      // 64, 128 or 256
  int32_t block_size = 0;
  float scale = 1.0f;
  // gpt-oss's attention sinks (null: none): [num_heads] fp32 logits, device, each in its head's
  // softmax denominator and weighing no value (as the CPU kernel, kernels/paged_attention.h).
  const float* sinks = nullptr;
  void* out = nullptr;  // [T, num_heads, head_dim], out_row_stride elements apart
  int64_t out_row_stride = 0;
};
// Query row i of sequence s sits at position context_len[s] - query_len + i and attends to
// cache positions [0, that position] (causal), online softmax in fp32.
void paged_attention(const PagedAttentionArgs& a, Stream stream);

// Copies each packed row's K and V (kv_width = num_kv_heads * head_dim elements each, row_stride
// apart; k and v may point into the fused qkv rows) to cache slot slot_mapping[t] =
// block * block_size + offset. A slot of -1 is skipped (padding).
void reshape_and_cache(DType dtype, const void* k, const void* v, int64_t row_stride,
                       const int32_t* slot_mapping, int32_t num_tokens, int32_t kv_width,
                       void* k_cache, void* v_cache, Stream stream);

// ---- element-wise steps ------------------------------------------------------------------------
// y[r] = x[r] * rsqrt(mean(x[r]^2) + eps) * w, in fp32. x and y may alias.
void rms_norm(DType dtype, const void* x, int64_t ldx, const void* w, float eps, int64_t rows,
              int32_t width, void* y, int64_t ldy, Stream stream);

// The pre-norm residual step, fused: residual[r] += x[r]; x[r] = rms_norm(residual[r]) * w.
// One read and one write of each row instead of three torch ops.
void fused_add_rms_norm(DType dtype, void* x, int64_t ldx, void* residual, int64_t ldr,
                        const void* w, float eps, int64_t rows, int32_t width, Stream stream);

// In place on fused qkv rows: optional per-head RMSNorm of q and k heads (Qwen3's q_norm /
// k_norm, nullptr to skip) then neox rotary embedding (a head's first half pairs with its
// second half). cos_sin: fp32 [max_position, head_dim] = cos in the first half, sin in the
// second, indexed by positions[t] (device).
struct QkNormRopeArgs {
  DType dtype = DType::bf16;
  void* qkv = nullptr;
  int64_t ld = 0;
  int64_t rows = 0;
  const int32_t* positions = nullptr;
  int32_t num_heads = 0, num_kv_heads = 0, head_dim = 0;
  const void* q_norm = nullptr;  // [head_dim], same dtype
  const void* k_norm = nullptr;
  float eps = 1e-6f;
  const float* cos_sin = nullptr;
};
void qk_norm_rope(const QkNormRopeArgs& a, Stream stream);

// out[r][j] = silu(gu[r][j]) * gu[r][inter + j] over the fused gate/up rows [rows, 2 * inter].
void silu_and_mul(DType dtype, const void* gu, int64_t rows, int64_t inter, void* out,
                  Stream stream);

// ---- on-device sampling ------------------------------------------------------------------------
// One row of fp32 logits per sequence; per-row parameters live on the device so that only
// token ids and logprobs cross to the host each step. Semantics follow sampling/sampler.h:
// logprob = log_softmax of the given logits (before temperature); temperature < 1e-5 is greedy
// (argmax, lowest id on ties); otherwise softmax(logits / T), top-k, top-p over the top-k
// distribution, min-p (p >= min_p * p_max). The draw is Gumbel-max with a counter-based Philox
// stream keyed by (seed, step, token id): it samples exactly from the kept, renormalized
// distribution and depends only on the request's own seed and step, never on the batch.
// (It is a different stream from the CPU sampler's mt19937: a seed reproduces per device.)
struct SamplingRowParams {
  float temperature = 1.0f;
  int32_t top_k = 0;   // <= 0: off
  float top_p = 1.0f;  // >= 1: off
  float min_p = 0.0f;  // <= 0: off
  uint64_t seed = 0;
  uint64_t step = 0;  // tokens this request has drawn so far: advances its stream
};
struct SampleArgs {
  const float* logits = nullptr;  // [rows, vocab], ld elements apart
  int64_t ld = 0;
  int32_t rows = 0;
  int32_t vocab = 0;
  const SamplingRowParams* params = nullptr;  // [rows], device
  int32_t* tokens = nullptr;                  // [rows], device
  float* logprobs = nullptr;                  // [rows], device, or nullptr
};
void sample(const SampleArgs& a, Stream stream);

// The Philox4x32-10 counter-based generator the sampler draws with, exposed so that CPU
// references can reproduce the device's choices bit for bit. Returns a uniform in (0, 1).
float philox_uniform(uint64_t seed, uint64_t step, uint32_t index);

}  // namespace ps::cuda
