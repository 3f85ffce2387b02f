// The step's int32 arrays packed for one upload (cuda/plan_upload.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "cuda/plan_upload.h"

namespace ps {
namespace {

// Two sequences: a 3-token prefill chunk (blocks 4, 7 of 4 slots) and a decode step (block 2).
StepPlan two_sequences() {
  StepPlan p;
  p.seq_ids = {10, 11};
  p.token_ids = {5, 6, 7, 9};
  p.positions = {0, 1, 2, 5};
  p.slot_mapping = {16, 17, 18, 9};
  p.query_start = {0, 3, 4};
  p.context_len = {3, 6};
  p.max_blocks_per_seq = 2;
  p.block_tables = {4, 7, 2, -1};
  p.sample_indices = {0, 1};
  return p;
}

std::vector<int32_t> slice(const std::vector<int32_t>& buf, int64_t at, size_t n) {
  return std::vector<int32_t>(buf.begin() + at, buf.begin() + at + int64_t(n));
}

TEST(PlanUpload, ArraysAreAlignedInOrderAndDoNotOverlap) {
  const StepPlan p = two_sequences();
  const PlanUploadLayout l = plan_upload_layout(p);
  const std::vector<std::pair<int64_t, int64_t>> spans = {
      {l.token_ids, 4},   {l.positions, 4},    {l.slot_mapping, 4}, {l.query_start, 3},
      {l.context_len, 2}, {l.block_tables, 4}, {l.logit_rows, 2}};
  int64_t end = 0;
  for (const auto& [offset, count] : spans) {
    EXPECT_EQ(offset % PlanUploadLayout::kPlanAlign, 0) << offset;
    EXPECT_GE(offset, end);
    end = offset + count;
  }
  EXPECT_GE(l.total, end);
  EXPECT_EQ(l.total % PlanUploadLayout::kPlanAlign, 0);
  EXPECT_EQ(l.total, 7 * PlanUploadLayout::kPlanAlign);  // each array fits in one 64-byte line
  EXPECT_EQ(l.num_tokens, 4);
  EXPECT_EQ(l.num_seqs, 2);
  EXPECT_EQ(l.num_logit_rows, 2);
  EXPECT_EQ(l.max_query_len, 3);
}

TEST(PlanUpload, PackedBufferHoldsThePlanAndZeroGaps) {
  const StepPlan p = two_sequences();
  const PlanUploadLayout l = plan_upload_layout(p);
  std::vector<int32_t> buf(size_t(l.total), 0x5a5a5a5a);  // garbage that must not survive
  pack_plan(p, l, buf.data());
  EXPECT_EQ(slice(buf, l.token_ids, 4), p.token_ids);
  EXPECT_EQ(slice(buf, l.positions, 4), p.positions);
  EXPECT_EQ(slice(buf, l.slot_mapping, 4), p.slot_mapping);
  EXPECT_EQ(slice(buf, l.query_start, 3), p.query_start);
  EXPECT_EQ(slice(buf, l.context_len, 2), p.context_len);
  EXPECT_EQ(slice(buf, l.block_tables, 4), p.block_tables);
  EXPECT_EQ(slice(buf, l.logit_rows, 2), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(buf[size_t(l.token_ids + 4)], 0);  // gap after token_ids
  EXPECT_EQ(std::count(buf.begin(), buf.end(), 0x5a5a5a5a), 0);
}

TEST(PlanUpload, LargeArraysPushTheNextOffsetToTheNextBoundary) {
  StepPlan p;
  const int32_t T = 37;
  p.seq_ids = {1};
  for (int32_t i = 0; i < T; ++i) {
    p.token_ids.push_back(i);
    p.positions.push_back(i);
    p.slot_mapping.push_back(i);
  }
  p.query_start = {0, T};
  p.context_len = {T};
  p.max_blocks_per_seq = 3;
  p.block_tables = {0, 1, 2};
  p.sample_indices = {0};
  const PlanUploadLayout l = plan_upload_layout(p);
  EXPECT_EQ(l.positions, 48);  // 37 rounded up to 16s
  EXPECT_EQ(l.slot_mapping, 96);
  EXPECT_EQ(l.query_start, 144);
  std::vector<int32_t> buf(size_t(l.total));
  pack_plan(p, l, buf.data());
  EXPECT_EQ(slice(buf, l.slot_mapping, size_t(T)), p.slot_mapping);
  EXPECT_EQ(buf[size_t(l.logit_rows)], T - 1);
}

TEST(PlanUpload, DraftRowsAndUnsampledSequences) {
  StepPlan p = two_sequences();
  p.sample_indices = {1};            // the prefill chunk does not sample yet
  p.token_ids = {5, 6, 7, 9, 3, 4};  // the decode sequence carries 2 drafts
  p.positions = {0, 1, 2, 5, 6, 7};
  p.slot_mapping = {16, 17, 18, 9, 10, 11};
  p.query_start = {0, 3, 6};
  p.context_len = {3, 8};
  p.num_draft_tokens = {2};
  const PlanUploadLayout l = plan_upload_layout(p);
  EXPECT_EQ(l.num_logit_rows, 3);
  std::vector<int32_t> buf(size_t(l.total));
  pack_plan(p, l, buf.data());
  EXPECT_EQ(slice(buf, l.logit_rows, 3), (std::vector<int32_t>{3, 4, 5}));
}

TEST(PlanUpload, ALayoutForAnotherPlanIsRefused) {
  const StepPlan p = two_sequences();
  const PlanUploadLayout l = plan_upload_layout(p);
  StepPlan other = p;
  other.token_ids.push_back(1);
  std::vector<int32_t> buf(size_t(l.total) + 64);
  EXPECT_THROW(pack_plan(other, l, buf.data()), std::invalid_argument);
  StepPlan broken = p;
  broken.query_start.pop_back();
  EXPECT_THROW(plan_upload_layout(broken), std::invalid_argument);
}

}  // namespace
}  // namespace ps
