// CUDA-graph batch-size buckets (cuda/graph_buckets.h).
#include <gtest/gtest.h>

#include <vector>

#include "cuda/graph_buckets.h"
#include "cuda/plan_upload.h"

namespace ps {
namespace {

StepPlan decode_step(int32_t seqs) {
  StepPlan p;
  for (int32_t s = 0; s < seqs; ++s) {
    p.seq_ids.push_back(s);
    p.token_ids.push_back(1);
    p.positions.push_back(4);
    p.slot_mapping.push_back(s * 8 + 4);
    p.query_start.push_back(s);
    p.context_len.push_back(5);
    p.block_tables.push_back(s);
    p.sample_indices.push_back(s);
  }
  p.query_start.push_back(seqs);
  p.max_blocks_per_seq = 1;
  return p;
}

TEST(GraphBuckets, PowersOfTwoUpTo256) {
  EXPECT_EQ(graph_buckets(), (std::vector<int32_t>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(graph_buckets(64), (std::vector<int32_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(graph_buckets(100), (std::vector<int32_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(graph_buckets(1000).back(), 256);
  EXPECT_TRUE(graph_buckets(0).empty());
}

TEST(GraphBuckets, SmallestBucketThatHoldsTheStep) {
  const std::vector<int32_t> b = graph_buckets();
  EXPECT_EQ(graph_bucket_for(1, b), 1);
  EXPECT_EQ(graph_bucket_for(2, b), 2);
  EXPECT_EQ(graph_bucket_for(3, b), 4);
  EXPECT_EQ(graph_bucket_for(17, b), 32);
  EXPECT_EQ(graph_bucket_for(128, b), 128);
  EXPECT_EQ(graph_bucket_for(129, b), 256);
  EXPECT_EQ(graph_bucket_for(256, b), 256);
  EXPECT_EQ(graph_bucket_for(257, b), 0);  // past the largest: eager
  EXPECT_EQ(graph_bucket_for(0, b), 0);
  EXPECT_EQ(graph_bucket_for(65, graph_buckets(64)), 0);
}

TEST(GraphBuckets, OnlyPureDecodeStepsAreEligible) {
  EXPECT_TRUE(is_graph_eligible(decode_step(1)));
  EXPECT_TRUE(is_graph_eligible(decode_step(37)));
  EXPECT_FALSE(is_graph_eligible(StepPlan{}));

  StepPlan prefill = decode_step(2);  // the second sequence brings 2 tokens
  prefill.token_ids.push_back(3);
  prefill.positions.push_back(5);
  prefill.slot_mapping.push_back(13);
  prefill.query_start.back() = 3;
  EXPECT_FALSE(is_graph_eligible(prefill));

  StepPlan chunk = decode_step(2);  // a sequence that does not sample (prefill chunk)
  chunk.sample_indices = {0};
  EXPECT_FALSE(is_graph_eligible(chunk));

  StepPlan drafts = decode_step(2);
  drafts.num_draft_tokens = {0, 1};
  EXPECT_FALSE(is_graph_eligible(drafts));
  drafts.num_draft_tokens = {0, 0};
  EXPECT_TRUE(is_graph_eligible(drafts));

  StepPlan lora = decode_step(2);
  lora.lora_slot = {-1, 0};
  EXPECT_FALSE(is_graph_eligible(lora));
  lora.lora_slot = {-1, -1};
  EXPECT_TRUE(is_graph_eligible(lora));

  StepPlan broken = decode_step(2);
  broken.query_start.pop_back();
  EXPECT_FALSE(is_graph_eligible(broken));
}

TEST(GraphBuckets, PaddingFillsTheBucketWithRowsThatWriteNothing) {
  StepPlan p = decode_step(3);
  p.max_blocks_per_seq = 2;
  p.block_tables = {0, 5, 1, -1, 2, 7};
  const StepPlan g = pad_decode_plan(p, 4, 6);
  EXPECT_EQ(g.num_seqs(), 4);
  EXPECT_EQ(g.num_tokens(), 4);
  EXPECT_EQ(g.token_ids, (std::vector<int32_t>{1, 1, 1, 0}));
  EXPECT_EQ(g.positions, (std::vector<int32_t>{4, 4, 4, 0}));
  EXPECT_EQ(g.slot_mapping, (std::vector<int32_t>{4, 12, 20, -1}));  // the pad writes no K/V
  EXPECT_EQ(g.context_len, (std::vector<int32_t>{5, 5, 5, 1}));
  EXPECT_EQ(g.query_start, (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(g.sample_indices, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(g.max_blocks_per_seq, 6);
  EXPECT_EQ(g.block_tables, (std::vector<int32_t>{0, 5, -1, -1, -1, -1, 1, -1, -1, -1, -1, -1,
                                                  2, 7, -1, -1, -1, -1, 0, -1, -1, -1, -1, -1}));
  EXPECT_EQ(g.logit_rows(), (std::vector<int32_t>{0, 1, 2, 3}));  // the first 3 are the plan's
  EXPECT_TRUE(is_graph_eligible(g));
}

TEST(GraphBuckets, EveryPaddedPlanOfABucketHasOneLayout) {
  // What a captured graph relies on: the upload layout depends on the bucket and width only.
  const PlanUploadLayout a = plan_upload_layout(pad_decode_plan(decode_step(3), 4, 8));
  StepPlan other = decode_step(4);
  other.positions.assign(4, 9);
  const PlanUploadLayout b = plan_upload_layout(pad_decode_plan(other, 4, 8));
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.block_tables, b.block_tables);
  EXPECT_EQ(a.logit_rows, b.logit_rows);
  EXPECT_EQ(a.max_query_len, 1);
  EXPECT_EQ(b.num_logit_rows, 4);
}

TEST(GraphBuckets, TheWarmUpPlanIsAllPaddingWithTheBucketsLayout) {
  const StepPlan w = graph_warmup_plan(4, 8);
  EXPECT_EQ(w.num_seqs(), 4);
  EXPECT_EQ(w.slot_mapping, (std::vector<int32_t>(4, -1)));  // writes no K/V anywhere
  EXPECT_EQ(w.context_len, (std::vector<int32_t>(4, 1)));
  EXPECT_EQ(w.token_ids, (std::vector<int32_t>(4, 0)));
  EXPECT_TRUE(is_graph_eligible(w));
  const PlanUploadLayout a = plan_upload_layout(w);
  const PlanUploadLayout b = plan_upload_layout(pad_decode_plan(decode_step(2), 4, 8));
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.logit_rows, b.logit_rows);
  EXPECT_THROW(graph_warmup_plan(0, 8), std::invalid_argument);
  EXPECT_THROW(graph_warmup_plan(4, 0), std::invalid_argument);
}

TEST(GraphBuckets, PaddingRefusesWhatAGraphCannotRun) {
  StepPlan prefill = decode_step(2);
  prefill.sample_indices = {0};
  EXPECT_THROW(pad_decode_plan(prefill, 2, 4), std::invalid_argument);
  EXPECT_THROW(pad_decode_plan(decode_step(3), 2, 4), std::invalid_argument);  // bucket < S
  StepPlan wide = decode_step(2);
  wide.max_blocks_per_seq = 5;
  wide.block_tables.assign(10, 0);
  EXPECT_THROW(pad_decode_plan(wide, 2, 4), std::invalid_argument);  // width < its blocks
}

}  // namespace
}  // namespace ps
