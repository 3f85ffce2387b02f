#include "cuda/graph_buckets.h"

#include <algorithm>
#include <stdexcept>

namespace ps {

std::vector<int32_t> graph_buckets(int32_t max_bucket) {
  std::vector<int32_t> b;
  for (int32_t n = 1; n <= std::min(max_bucket, 256); n *= 2) b.push_back(n);
  return b;
}

int32_t graph_bucket_for(int32_t num_seqs, const std::vector<int32_t>& buckets) {
  if (num_seqs <= 0) return 0;
  // Buckets ascend: the first that holds the step wastes the fewest padded rows.
  auto it = std::lower_bound(buckets.begin(), buckets.end(), num_seqs);
  return it == buckets.end() ? 0 : *it;
}

bool is_graph_eligible(const StepPlan& plan) {
  const int32_t S = plan.num_seqs();
  if (S == 0 || plan.num_tokens() != S || plan.sample_indices.size() != size_t(S) ||
      plan.query_start.size() != size_t(S) + 1 || !plan.prompt_rows.empty()) {
    return false;
  }
  for (int32_t n : plan.num_draft_tokens) {
    if (n != 0) return false;
  }
  for (int32_t slot : plan.lora_slot) {
    if (slot >= 0) return false;
  }
  for (int32_t s = 0; s < S; ++s) {
    if (plan.query_start[s + 1] - plan.query_start[s] != 1) return false;
  }
  return true;
}

namespace {

// Widens `plan`'s rows to `width` block-table columns and appends padding rows up to `bucket`.
StepPlan padded(const StepPlan& plan, int32_t bucket, int32_t width) {
  const int32_t S = plan.num_seqs();
  StepPlan p;
  p.seq_ids = plan.seq_ids;
  p.token_ids = plan.token_ids;
  p.positions = plan.positions;
  p.slot_mapping = plan.slot_mapping;
  p.context_len = plan.context_len;
  p.max_blocks_per_seq = width;
  p.block_tables.assign(size_t(bucket) * size_t(width), -1);
  for (int32_t s = 0; s < S; ++s) {
    std::copy_n(plan.block_tables.begin() + int64_t{s} * plan.max_blocks_per_seq,
                plan.max_blocks_per_seq, p.block_tables.begin() + int64_t{s} * width);
  }
  for (int32_t s = S; s < bucket; ++s) {
    p.seq_ids.push_back(-1);
    p.token_ids.push_back(0);
    p.positions.push_back(0);
    p.slot_mapping.push_back(-1);
    p.context_len.push_back(1);
    p.block_tables[size_t(s) * size_t(width)] = 0;
  }
  for (int32_t s = 0; s <= bucket; ++s) p.query_start.push_back(s);
  for (int32_t s = 0; s < bucket; ++s) p.sample_indices.push_back(s);
  p.num_decode_tokens = bucket;
  return p;
}

}  // namespace

StepPlan pad_decode_plan(const StepPlan& plan, int32_t bucket, int32_t width) {
  if (!is_graph_eligible(plan)) throw std::invalid_argument("pad_decode_plan: not a decode step");
  if (bucket < plan.num_seqs() || width < plan.max_blocks_per_seq || width < 1) {
    throw std::invalid_argument("pad_decode_plan: bucket or width smaller than the plan");
  }
  return padded(plan, bucket, width);
}

StepPlan graph_warmup_plan(int32_t bucket, int32_t width) {
  if (bucket < 1 || width < 1) {
    throw std::invalid_argument("graph_warmup_plan: bucket and width must be >= 1");
  }
  StepPlan empty;
  empty.max_blocks_per_seq = width;
  return padded(empty, bucket, width);
}

}  // namespace ps
