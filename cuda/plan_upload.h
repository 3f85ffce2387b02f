#pragma once
// A step's int32 arrays packed into one buffer (issue #19): the CUDA executor fills a pinned
// host buffer with them and sends it in one async copy, instead of seven small copies each
// paying the copy-engine latency. Pure layout code, tested without a GPU.
#include <cstddef>  // size_t, which scheduler/step_plan.h uses unqualified
#include <cstdint>
#include <vector>

#include "scheduler/step_plan.h"

namespace ps {

// Offsets in int32 elements from the start of the packed buffer. Each array starts on a
// kPlanAlign boundary (64 bytes) so device loads of it are aligned whatever came before.
struct PlanUploadLayout {
  static constexpr int64_t kPlanAlign = 16;
  int64_t token_ids = 0, positions = 0, slot_mapping = 0;  // [T]
  int64_t query_start = 0;                                 // [S + 1]
  int64_t context_len = 0;                                 // [S]
  int64_t block_tables = 0;                                // [S * max_blocks_per_seq]
  int64_t logit_rows = 0;                                  // [R]: plan.logit_rows()
  int64_t total = 0;                                       // elements in the whole buffer
  int32_t num_tokens = 0, num_seqs = 0, num_logit_rows = 0, max_blocks_per_seq = 0;
  int32_t max_query_len = 0;  // longest new-token run of a sequence: sizes attention's grid
};

PlanUploadLayout plan_upload_layout(const StepPlan& plan);

// Writes the plan's arrays at the layout's offsets into dst[0, layout.total); the gaps between
// arrays are zeroed so the buffer's bytes depend on the plan alone.
void pack_plan(const StepPlan& plan, const PlanUploadLayout& layout, int32_t* dst);

}  // namespace ps
