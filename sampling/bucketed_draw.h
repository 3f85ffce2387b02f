#pragma once
#include <cstdint>

#include "sampling/sampling_params.h"

namespace ps {

// The temperature / top-p / min-p draw over a whole row (no top-k), without sorting the row.
//
// Tokens are put in buckets by z = (logit - max) / T, 16 buckets per unit of z down to -32,
// plus one for everything lower. Buckets are contiguous runs of the (probability desc,
// id asc) order, so bucket masses locate the top-p boundary, the min-p boundary and the
// draw's target; only the bucket each one falls in is sorted. The result is the token the
// inverse CDF over the fully sorted, filtered row would give (up to float rounding at a
// boundary), at the cost of two or three linear passes.
//
// max_logit must be the row's finite maximum; u is the request's uniform in [0, 1).
int32_t draw_bucketed(const float* logits, int32_t vocab, float max_logit, const SamplingParams& p,
                      double u);

}  // namespace ps
