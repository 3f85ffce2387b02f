#pragma once
// Causal attention of a packed batch's new tokens over the paged KV cache (docs/architecture.md §3,
// §7). Raw pointers, no torch: the CPU kernel of the step, and what a CUDA kernel must match.
//
// Cache layout, per layer: K and V each [num_blocks, block_size, num_kv_heads, head_dim], fp32 or
// bf16 (--kv-cache-dtype bfloat16: half the bytes per token, widened to fp32 as it is read).
// Token position p of sequence s lives in block block_tables[s][p / block_size] at offset
// p % block_size.
#include <cstdint>

namespace ps {

struct PagedAttentionArgs {
  // [T, num_heads, head_dim] query rows, q_row_stride floats apart (the fused qkv projection's
  // output can be passed in place: its q part is the first num_heads * head_dim floats of a row).
  const float* q = nullptr;
  int64_t q_row_stride = 0;
  const float* k_cache = nullptr;
  const float* v_cache = nullptr;
  // A bf16 cache instead (then k_cache / v_cache are unused).
  const uint16_t* k_cache_bf16 = nullptr;
  const uint16_t* v_cache_bf16 = nullptr;
  // [num_seqs, max_blocks_per_seq]; only the entries that cover context_len are read.
  const int32_t* block_tables = nullptr;
  int32_t max_blocks_per_seq = 0;
  // [num_seqs + 1]: sequence s owns packed rows [query_start[s], query_start[s + 1]).
  const int32_t* query_start = nullptr;
  // [num_seqs]: cache length of s including this step's tokens. Query row i of s sits at
  // position context_len[s] - query_len + i and attends to cache positions [0, that position].
  const int32_t* context_len = nullptr;
  int32_t num_seqs = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;  // divides num_heads (GQA: num_heads / num_kv_heads q heads share one)
  int32_t head_dim = 0;
  int32_t block_size = 0;
  float scale = 1.0f;  // usually 1 / sqrt(head_dim)
  // A sliding-window layer's window W (0: none): the row at position p attends to cache
  // positions [max(0, p - W + 1), p] only, as HF masks it (kv > q - W). Blocks wholly below every
  // row's window are not read, so their block-table entries may be anything.
  int32_t window = 0;
  // Gemma 2's attention soft-capping (0: none): a score s becomes cap * tanh(s / cap) before the
  // softmax, as HF computes it. Runs on the per-head path.
  float softcap = 0.0f;
  // gpt-oss's attention sinks (null: none): [num_heads] learned logits, one per query head, that
  // join each row's softmax denominator (as HF concatenates them to the scores) but attend to no
  // value, so a head can put weight on "nothing". Applied when a row's sums are final.
  const float* sinks = nullptr;
  // [T, num_heads, head_dim], out_row_stride floats apart.
  float* out = nullptr;
  int64_t out_row_stride = 0;

  void set_cache(const void* k, const void* v, bool bf16) {
    k_cache = bf16 ? nullptr : static_cast<const float*>(k);
    v_cache = bf16 ? nullptr : static_cast<const float*>(v);
    k_cache_bf16 = bf16 ? static_cast<const uint16_t*>(k) : nullptr;
    v_cache_bf16 = bf16 ? static_cast<const uint16_t*>(v) : nullptr;
  }
};

// Parallel over (sequence, kv head, chunk of query rows); online softmax over cache blocks.
// Throws std::invalid_argument on inconsistent shapes (not on bad block ids: the caller's
// plan is trusted there, the model runner validates it).
void paged_attention(const PagedAttentionArgs& args);

// Copies each packed row's K and V (num_kv_heads * head_dim floats each) to cache slot
// slot_mapping[t] = block * block_size + offset. A slot of -1 is skipped (padding).
void write_kv_cache(const float* k, const float* v, int64_t row_stride, const int32_t* slot_mapping,
                    int32_t num_tokens, int32_t kv_width, float* k_cache, float* v_cache);
// The same into a bf16 cache, rounded to nearest even.
void write_kv_cache_bf16(const float* k, const float* v, int64_t row_stride,
                         const int32_t* slot_mapping, int32_t num_tokens, int32_t kv_width,
                         uint16_t* k_cache, uint16_t* v_cache);

}  // namespace ps
