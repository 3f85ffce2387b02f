#pragma once
// The KV pool's memory: zero-filled, committed page by page (2 MB transparent huge pages where
// the kernel gives them) as blocks are first written.
//
// A pool sized by --kv-cache-memory (512 MiB by default) that was zeroed at start held all of
// its pages from the first second, whatever the load: on the Qwen3-0.6B shape a 4-sequence run
// peaked at 1.8x the checkpoint, 0.5 GB of it cache pages no token had touched (issue #21). An
// anonymous mapping reads as zeros and takes memory only where written, so RSS follows the
// tokens held; a pool that fills up holds all of it, as before.
#include <cstdint>
#include <vector>

#include "model/tensor.h"

namespace ps {

// A tensor of `sizes` and `type` over its own anonymous mapping (unmapped with the tensor).
// Throws std::runtime_error naming the bytes when the mapping fails.
Tensor lazily_committed_zeros(std::vector<int64_t> sizes, DType type);

}  // namespace ps
