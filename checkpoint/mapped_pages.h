#pragma once
// Giving back the page cache of checkpoint matrices that a bf16/f16 load viewed in place.
#include "model/model_weights.h"
#include "model/tensor.h"

namespace ps {

// Drops the resident pages of `t` when it views one of weights.mapped (a read-only file
// mapping: a later read faults them back in from the file), so a matrix the runner has packed
// costs no memory twice. Anything else (an fp32 copy, a converted tensor) is left alone.
void release_mapped_pages(const ModelWeights& weights, const Tensor& t);

}  // namespace ps
