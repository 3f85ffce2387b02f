#include "cuda/plan_upload.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ps {
namespace {

int64_t round_up(int64_t n) {
  const int64_t a = PlanUploadLayout::kPlanAlign;
  return (n + a - 1) / a * a;
}

void put(int32_t* dst, int64_t offset, const std::vector<int32_t>& v) {
  if (!v.empty()) std::memcpy(dst + offset, v.data(), v.size() * sizeof(int32_t));
}

}  // namespace

PlanUploadLayout plan_upload_layout(const StepPlan& plan) {
  PlanUploadLayout l;
  l.num_tokens = plan.num_tokens();
  l.num_seqs = plan.num_seqs();
  l.max_blocks_per_seq = plan.max_blocks_per_seq;
  if (plan.query_start.size() != size_t(l.num_seqs) + 1) {
    throw std::invalid_argument("plan_upload_layout: query_start needs S + 1 entries");
  }
  for (int32_t s = 0; s < l.num_seqs; ++s) {
    l.max_query_len = std::max(l.max_query_len, plan.query_start[s + 1] - plan.query_start[s]);
  }
  const std::vector<int32_t> rows = plan.logit_rows();
  l.num_logit_rows = int32_t(rows.size());
  int64_t at = 0;
  auto place = [&at](int64_t count) {
    const int64_t offset = at;
    at = round_up(at + count);
    return offset;
  };
  l.token_ids = place(l.num_tokens);
  l.positions = place(l.num_tokens);
  l.slot_mapping = place(l.num_tokens);
  l.query_start = place(l.num_seqs + 1);
  l.context_len = place(l.num_seqs);
  l.block_tables = place(int64_t{l.num_seqs} * l.max_blocks_per_seq);
  l.logit_rows = place(l.num_logit_rows);
  l.total = at;
  return l;
}

void pack_plan(const StepPlan& plan, const PlanUploadLayout& l, int32_t* dst) {
  if (plan.num_tokens() != l.num_tokens || plan.num_seqs() != l.num_seqs ||
      plan.max_blocks_per_seq != l.max_blocks_per_seq) {
    throw std::invalid_argument("pack_plan: the layout was made for another plan");
  }
  std::memset(dst, 0, size_t(l.total) * sizeof(int32_t));
  put(dst, l.token_ids, plan.token_ids);
  put(dst, l.positions, plan.positions);
  put(dst, l.slot_mapping, plan.slot_mapping);
  put(dst, l.query_start, plan.query_start);
  put(dst, l.context_len, plan.context_len);
  put(dst, l.block_tables, plan.block_tables);
  put(dst, l.logit_rows, plan.logit_rows());
}

}  // namespace ps
