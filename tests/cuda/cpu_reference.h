#pragma once
// Plain C++ references for the kernels of model/cuda (kernels.h): the simplest loops that state
// each kernel's contract, in fp32/fp64 on float arrays (inputs already rounded to the kernel's
// dtype by the caller). No CUDA, no torch.
#include <cstdint>
#include <vector>

namespace ps::cuda::ref {

void rms_norm(const float* x, const float* w, float eps, int rows, int width, float* y);
// residual += x, rounded by `round` (the dtype's rounding); x = rms_norm(residual) * w.
void fused_add_rms_norm(float* x, float* residual, const float* w, float eps, int rows, int width,
                        float (*round)(float));
void qk_norm_rope(float* qkv, int64_t ld, int rows, const int32_t* positions, int num_heads,
                  int num_kv_heads, int head_dim, const float* q_norm, const float* k_norm,
                  float eps, const float* cos_sin);
void silu_and_mul(const float* gu, int rows, int inter, float* out);

struct AttentionCase {
  int num_heads, num_kv_heads, head_dim, block_size, max_blocks_per_seq;
  std::vector<int32_t> block_tables, query_start, context_len;
  float scale;
  std::vector<float> sinks;  // [num_heads] gpt-oss attention sinks; empty: none
};
// q [T, H, D] dense, caches [num_blocks, block_size, KVH, D], out [T, H, D].
void paged_attention(const AttentionCase& c, const float* q, const float* k_cache,
                     const float* v_cache, float* out);

struct SampleRef {
  int token;               // what the device must pick with the same Philox stream
  float logprob;           // log_softmax of the raw logits at token
  std::vector<char> kept;  // which ids survived top-k / top-p / min-p
};
SampleRef sample(const float* logits, int vocab, float temperature, int top_k, float top_p,
                 float min_p, uint64_t seed, uint64_t step);

}  // namespace ps::cuda::ref
