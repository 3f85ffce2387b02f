// Chunked prefill: prompts longer than the token budget span steps, mixed with decodes.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "scheduler/scheduler.h"
#include "tests/iota_tokens.h"
#include "tests/scheduler/fake_model.h"

namespace ps {
namespace {

using testing::drain;
using testing::FakeModel;
using testing::reference_output;
using testing::run_step;

using testing::iota_tokens;

SchedulerConfig cfg(int32_t tokens) {
  SchedulerConfig c;
  c.num_blocks = 64;
  c.block_size = 4;
  c.max_num_seqs = 8;
  c.max_batched_tokens = tokens;
  return c;
}

TEST(ChunkedPrefill, LongPromptSpansStepsMixedWithDecodes) {
  Scheduler sched(cfg(8));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(3));
  StepPlan plan = run_step(sched, model);
  EXPECT_EQ(plan.sample_indices, std::vector<int32_t>{0});

  sched.add(2, iota_tokens(20, 100));
  // Decode of 1 first, then 7 prompt tokens of 2: no logits for 2 yet.
  for (int32_t chunk : {7, 7}) {
    plan = run_step(sched, model);
    ASSERT_EQ(plan.seq_ids, (std::vector<SeqId>{1, 2}));
    EXPECT_EQ(plan.query_start, (std::vector<int32_t>{0, 1, 1 + chunk}));
    EXPECT_EQ(plan.num_decode_tokens, 1);
    EXPECT_EQ(plan.num_prefill_tokens, chunk);
    EXPECT_EQ(plan.sample_indices, std::vector<int32_t>{0});
    EXPECT_EQ(sched.find(2)->num_output_tokens(), 0);
  }
  // The last 6 prompt tokens: now 2 samples too.
  plan = run_step(sched, model);
  EXPECT_EQ(plan.query_start, (std::vector<int32_t>{0, 1, 7}));
  EXPECT_EQ(plan.positions.back(), 19);
  EXPECT_EQ(plan.context_len, (std::vector<int32_t>{6, 20}));  // 3 prompt + 3 decoded
  EXPECT_EQ(plan.sample_indices, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(sched.find(2)->num_output_tokens(), 1);
  EXPECT_EQ(sched.find(2)->output_tokens()[0], reference_output(iota_tokens(20, 100), 1)[0]);
}

TEST(ChunkedPrefill, ChunksFollowTheBudgetAndOutputIsExact) {
  Scheduler sched(cfg(16));
  FakeModel model(sched.config());
  const auto prompt = iota_tokens(50, 7);
  sched.add(1, prompt);
  std::vector<int32_t> chunks;
  for (int i = 0; i < 4; ++i) {
    const StepPlan plan = run_step(sched, model);
    chunks.push_back(plan.num_tokens());
    EXPECT_EQ(plan.sample_indices.empty(), i < 3);
  }
  EXPECT_EQ(chunks, (std::vector<int32_t>{16, 16, 16, 2}));
  std::map<SeqId, std::vector<int32_t>> outputs;
  drain(sched, model, {{1, 5}}, outputs);
  EXPECT_EQ(outputs[1], reference_output(prompt, 5));
}

TEST(ChunkedPrefill, SecondPromptGetsWhatTheFirstLeaves) {
  Scheduler sched(cfg(10));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(6));
  sched.add(2, iota_tokens(9, 50));
  StepPlan plan = run_step(sched, model);
  EXPECT_EQ(plan.query_start, (std::vector<int32_t>{0, 6, 10}));
  EXPECT_EQ(plan.sample_indices, std::vector<int32_t>{0});
  // Next step: decode of 1 first, then the rest of 2 (5 tokens), oldest prefill first.
  plan = run_step(sched, model);
  EXPECT_EQ(plan.seq_ids, (std::vector<SeqId>{1, 2}));
  EXPECT_EQ(plan.query_start, (std::vector<int32_t>{0, 1, 6}));
  EXPECT_EQ(plan.sample_indices, (std::vector<int32_t>{0, 1}));
}

}  // namespace
}  // namespace ps
