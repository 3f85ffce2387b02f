#pragma once
// The paged-attention kernel's grouped path (attention_heads.h) as functions of their own, one per
// instance, each compiled for its vector width's ISA (16 floats: x86-64-v4, 8: x86-64-v3).
// Inlined into the item loop (paged_attention.cpp: a dozen instances in one function), GCC kept
// the loops' counters and pointers in stack slots and reloaded them inside the inner loops; as
// functions of their own the 0.6B shape's prefill attention ran 1.2-1.3x faster and decode no
// slower (bench_model_paged_attention, docs/performance.md).
#include <cstdint>

#include "kernels/attention_heads.h"
#include "kernels/attention_rows.h"

namespace ps::attn {

#if PS_X86_KERNELS
#define PS_ATTN_TARGET(ARCH) __attribute__((noinline, target(ARCH)))
#else
#define PS_ATTN_TARGET(ARCH) __attribute__((noinline))
#endif
#define PS_ATTN_BLOCK_PARAMS                                                                     \
  const float *q, const KV *kb, const KV *vb, int64_t tok_stride, int32_t n, int32_t block_size, \
      float scale, float *p, float *m, float *l, float *acc, int64_t ahead
#define PS_ATTN_BLOCK_ARGS q, kb, vb, tok_stride, n, block_size, scale, p, m, l, acc, ahead

template <int kD, int HG, bool kAhead, typename KV>
PS_ATTN_TARGET("arch=x86-64-v4")
void attend_block_heads_w16(PS_ATTN_BLOCK_PARAMS) {
  attend_block_heads<16, kD, HG, kAhead>(PS_ATTN_BLOCK_ARGS);
}
template <int kD, int HG, bool kAhead, typename KV>
PS_ATTN_TARGET("arch=x86-64-v3")
void attend_block_heads_w8(PS_ATTN_BLOCK_PARAMS) {
  attend_block_heads<8, kD, HG, kAhead>(PS_ATTN_BLOCK_ARGS);
}
#define PS_ATTN_ROWS_PARAMS \
  const BlockRow *rows, const float *kb, const float *vb, int32_t n, int32_t block_size, float scale
#define PS_ATTN_ROWS_ARGS rows, kb, vb, n, block_size, scale
template <int kD, int HG, int R>
PS_ATTN_TARGET("arch=x86-64-v4")
void attend_block_rows_w16(PS_ATTN_ROWS_PARAMS) {
  attend_block_rows<16, kD, HG, R>(PS_ATTN_ROWS_ARGS);
}
template <int kD, int HG, int R>
PS_ATTN_TARGET("arch=x86-64-v3")
void attend_block_rows_w8(PS_ATTN_ROWS_PARAMS) {
  attend_block_rows<8, kD, HG, R>(PS_ATTN_ROWS_ARGS);
}

// The instance of W's ISA.
template <int W, int kD, int HG, bool kAhead, typename KV>
PS_INLINE void call_block_heads(PS_ATTN_BLOCK_PARAMS) {
  if constexpr (W == 16) {
    attend_block_heads_w16<kD, HG, kAhead>(PS_ATTN_BLOCK_ARGS);
  } else {
    attend_block_heads_w8<kD, HG, kAhead>(PS_ATTN_BLOCK_ARGS);
  }
}
template <int W, int kD, int HG, int R>
PS_INLINE void call_block_rows(PS_ATTN_ROWS_PARAMS) {
  if constexpr (W == 16) {
    attend_block_rows_w16<kD, HG, R>(PS_ATTN_ROWS_ARGS);
  } else {
    attend_block_rows_w8<kD, HG, R>(PS_ATTN_ROWS_ARGS);
  }
}
#undef PS_ATTN_ROWS_PARAMS
#undef PS_ATTN_ROWS_ARGS
#undef PS_ATTN_TARGET
#undef PS_ATTN_BLOCK_PARAMS
#undef PS_ATTN_BLOCK_ARGS

}  // namespace ps::attn
