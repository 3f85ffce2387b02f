#pragma once
// The paged-attention kernel's grouped path (attention_heads.h) as functions of their own, one per
// instance, each compiled for its vector width's ISA (16 floats: x86-64-v4, 8: x86-64-v3).
// Inlined into the item loop (paged_attention.cpp: a dozen instances in one function), GCC kept
// the loops' counters and pointers in stack slots and reloaded them inside the inner loops; as
// functions of their own the 0.6B shape's prefill attention ran 1.2-1.3x faster and decode no
// slower (bench_model_paged_attention, docs/performance.md).
#include <cstdint>

#include "kernels/attention_heads.h"
#include "kernels/attention_pairs.h"

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
#define PS_ATTN_PAIR_PARAMS                                                                     \
  const float *qa, const float *qb, const float *kb, const float *vb, int32_t n,                \
      int32_t block_size, float scale, float *pa, float *pb, float *ma, float *la, float *acca, \
      float *mb, float *lb, float *accb
#define PS_ATTN_PAIR_ARGS qa, qb, kb, vb, n, block_size, scale, pa, pb, ma, la, acca, mb, lb, accb
template <int kD, int HG>
PS_ATTN_TARGET("arch=x86-64-v4")
void attend_block_pair_w16(PS_ATTN_PAIR_PARAMS) {
  attend_block_pair<16, kD, HG>(PS_ATTN_PAIR_ARGS);
}
template <int kD, int HG>
PS_ATTN_TARGET("arch=x86-64-v3")
void attend_block_pair_w8(PS_ATTN_PAIR_PARAMS) {
  attend_block_pair<8, kD, HG>(PS_ATTN_PAIR_ARGS);
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
template <int W, int kD, int HG>
PS_INLINE void call_block_pair(PS_ATTN_PAIR_PARAMS) {
  if constexpr (W == 16) {
    attend_block_pair_w16<kD, HG>(PS_ATTN_PAIR_ARGS);
  } else {
    attend_block_pair_w8<kD, HG>(PS_ATTN_PAIR_ARGS);
  }
}
#undef PS_ATTN_PAIR_PARAMS
#undef PS_ATTN_PAIR_ARGS
#undef PS_ATTN_TARGET
#undef PS_ATTN_BLOCK_PARAMS
#undef PS_ATTN_BLOCK_ARGS

}  // namespace ps::attn
