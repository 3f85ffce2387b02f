// Scheduler basics: configuration, admission order, limits, rejection, finish, prefix reuse.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "tests/iota_tokens.h"
#include "tests/scheduler/fake_model.h"

namespace ps {
namespace {

using testing::drain;
using testing::FakeModel;
using testing::finish_done;
using testing::reference_output;
using testing::run_step;

using testing::iota_tokens;

SchedulerConfig cfg(int32_t blocks, int32_t bs, int32_t seqs = 64, int32_t tokens = 2048) {
  SchedulerConfig c;
  c.num_blocks = blocks;
  c.block_size = bs;
  c.max_num_seqs = seqs;
  c.max_batched_tokens = tokens;
  return c;
}

TEST(Scheduler, RejectsBadConfig) {
  EXPECT_THROW(Scheduler(cfg(0, 16)), std::invalid_argument);
  EXPECT_THROW(Scheduler(cfg(8, 0)), std::invalid_argument);
  EXPECT_THROW(Scheduler(cfg(8, 16, 0)), std::invalid_argument);
  EXPECT_THROW(Scheduler(cfg(8, 16, 4, 0)), std::invalid_argument);
}

TEST(Scheduler, RejectsBadAdd) {
  Scheduler sched(cfg(8, 4));
  EXPECT_THROW(sched.add(1, {}), std::invalid_argument);
  sched.add(1, {5});
  EXPECT_THROW(sched.add(1, {6}), std::invalid_argument);
  EXPECT_EQ(sched.num_waiting(), 1);
  const Sequence* seq = sched.find(1);
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->status(), SeqStatus::kWaiting);
  EXPECT_EQ(seq->tokens(), std::vector<int32_t>{5});
}

TEST(Scheduler, EmptyStepWhenIdle) {
  Scheduler sched(cfg(8, 4));
  const StepPlan plan = sched.schedule();
  EXPECT_TRUE(plan.empty());
  EXPECT_EQ(plan.query_start, std::vector<int32_t>{0});
  sched.postprocess(plan, {});
  EXPECT_FALSE(sched.has_unfinished());
}

TEST(Scheduler, FifoAdmissionUnderMaxNumSeqs) {
  Scheduler sched(cfg(64, 4, /*seqs=*/2));
  FakeModel model(sched.config());
  for (SeqId id = 1; id <= 5; ++id) sched.add(id, iota_tokens(3, 10 * id));
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{1, 2}));
  EXPECT_EQ(sched.waiting_ids(), (std::vector<SeqId>{3, 4, 5}));
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{1, 2}));  // both decode
  sched.finish(1);
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{2, 3}));  // decode, then admit
  sched.finish(2);
  sched.finish(3);
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{4, 5}));
  EXPECT_EQ(sched.num_running(), 2);
  EXPECT_EQ(sched.num_waiting(), 0);
}

TEST(Scheduler, WaitingSequenceThatDoesNotFitBlocksLaterOnes) {
  Scheduler sched(cfg(10, 4));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(21));  // 6 blocks
  run_step(sched, model);
  sched.add(2, iota_tokens(20, 100));  // needs 5 blocks, 4 available
  sched.add(3, iota_tokens(2, 200));   // would fit, but must not skip ahead
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{1}));
  EXPECT_EQ(sched.waiting_ids(), (std::vector<SeqId>{2, 3}));
  sched.finish(1);
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{2, 3}));
}

TEST(Scheduler, LongPromptIsNotStarvedByAStreamOfShortOnes) {
  Scheduler sched(cfg(16, 4, /*seqs=*/4, /*tokens=*/16));
  FakeModel model(sched.config());
  std::map<SeqId, int32_t> max_tokens;
  std::map<SeqId, std::vector<int32_t>> outputs;
  std::vector<SeqId> added, admitted;
  SeqId next = 1;
  const SeqId long_id = 1000;
  for (int32_t step = 0; step < 400 && (step < 60 || sched.has_unfinished()); ++step) {
    if (step < 60) {
      for (int k = 0; k < 2; ++k, ++next) {
        sched.add(next, iota_tokens(4, 7 * static_cast<int32_t>(next)));
        max_tokens[next] = 4;
        added.push_back(next);
      }
    }
    if (step == 3) {
      sched.add(long_id, iota_tokens(40, 5000));
      max_tokens[long_id] = 8;
      added.push_back(long_id);
    }
    const StepPlan plan = run_step(sched, model);
    for (SeqId id : plan.seq_ids) {
      if (std::find(admitted.begin(), admitted.end(), id) == admitted.end()) admitted.push_back(id);
    }
    finish_done(sched, plan, max_tokens, outputs);
  }
  EXPECT_FALSE(sched.has_unfinished());
  EXPECT_EQ(admitted, added);  // first scheduled in exactly the order they arrived
  ASSERT_EQ(outputs.count(long_id), 1u);
  EXPECT_EQ(outputs[long_id], reference_output(iota_tokens(40, 5000), 8));
}

TEST(Scheduler, RejectsPromptLargerThanThePool) {
  Scheduler sched(cfg(4, 4));
  sched.add(1, iota_tokens(17));
  sched.add(2, iota_tokens(16));
  EXPECT_EQ(sched.take_rejected(), std::vector<SeqId>{1});
  EXPECT_TRUE(sched.take_rejected().empty());
  EXPECT_EQ(sched.find(1), nullptr);
  EXPECT_NE(sched.find(2), nullptr);
  sched.check_integrity();
}

TEST(Scheduler, SequenceThatOutgrowsThePoolIsRejected) {
  Scheduler sched(cfg(3, 2));  // 6 slots
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(3));
  bool preempted = false;
  for (int i = 0; i < 10 && sched.has_unfinished(); ++i) {
    const StepPlan plan = run_step(sched, model);
    preempted |= !plan.preempted.empty();
  }
  // Grew to 7 tokens: position 6 needs a fourth block; it preempted itself, then was rejected.
  EXPECT_TRUE(preempted);
  EXPECT_EQ(sched.take_rejected(), std::vector<SeqId>{1});
  EXPECT_FALSE(sched.has_unfinished());
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 0);
}

TEST(Scheduler, FinishReleasesBlocksFromAnyState) {
  Scheduler sched(cfg(8, 4, /*seqs=*/1));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(10));
  sched.add(2, iota_tokens(5, 50));
  run_step(sched, model);
  EXPECT_EQ(sched.find(1)->status(), SeqStatus::kRunning);
  EXPECT_EQ(sched.find(2)->status(), SeqStatus::kWaiting);
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 3);

  sched.finish(1);  // running -> finished: 2 full blocks stay cached, the partial one is freed
  EXPECT_EQ(sched.find(1), nullptr);
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 0);
  EXPECT_EQ(sched.block_manager().num_cached_blocks(), 2);
  sched.finish(2);  // waiting -> finished
  EXPECT_FALSE(sched.has_unfinished());
  sched.finish(2);  // unknown: no-op
  sched.finish(99);
  sched.check_integrity();
}

TEST(Scheduler, AbortBetweenScheduleAndPostprocessIsSkipped) {
  Scheduler sched(cfg(16, 4));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(5));
  sched.add(2, iota_tokens(5, 40));
  const StepPlan plan = sched.schedule();
  const std::vector<int32_t> sampled = model.run(plan);
  sched.finish(1);
  sched.postprocess(plan, sampled);
  sched.check_integrity();
  EXPECT_EQ(sched.find(2)->num_output_tokens(), 1);
  EXPECT_THROW(sched.postprocess(sched.schedule(), {}), std::invalid_argument);
}

TEST(Scheduler, PrefixCacheServesALaterRequest) {
  Scheduler sched(cfg(32, 4));
  FakeModel model(sched.config());
  std::map<SeqId, std::vector<int32_t>> outputs;
  const auto a = iota_tokens(18);  // 4 full blocks + 2
  sched.add(1, a);
  drain(sched, model, {{1, 2}}, outputs);
  EXPECT_EQ(sched.block_manager().prefix_hits(), 0u);

  auto b = std::vector<int32_t>(a.begin(), a.begin() + 16);
  b.insert(b.end(), {900, 901, 902, 903});
  sched.add(2, b);
  const StepPlan plan = run_step(sched, model);
  ASSERT_EQ(plan.seq_ids, std::vector<SeqId>{2});
  EXPECT_EQ(plan.num_tokens(), 4);  // only the uncached tail is computed
  EXPECT_EQ(plan.positions.front(), 16);
  EXPECT_EQ(plan.context_len[0], 20);
  EXPECT_EQ(sched.find(2)->num_cached_prompt_tokens(), 16);
  EXPECT_EQ(sched.block_manager().prefix_hits(), 16u);
  EXPECT_EQ(sched.block_manager().prefix_queries(), 18u + 20u);

  // A prompt that is exactly cached full blocks still computes its last block.
  sched.add(3, std::vector<int32_t>(a.begin(), a.begin() + 16));
  drain(sched, model, {{2, 3}, {3, 3}}, outputs);
  EXPECT_EQ(outputs[2], reference_output(b, 3));
  EXPECT_EQ(outputs[3], reference_output(std::vector<int32_t>(a.begin(), a.begin() + 16), 3));
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 0);
}

// Prompt logprobs: every chunk lists its prompt rows (the last row of a chunk scores the next
// chunk's first token; the sampling row is never listed), and the cached prefix is not used.
TEST(Scheduler, PromptLogitRowsCoverThePromptAcrossChunks) {
  Scheduler sched(cfg(32, 4, 64, 4));
  FakeModel model(sched.config());
  std::map<SeqId, std::vector<int32_t>> outputs;
  const auto a = iota_tokens(10);
  sched.add(1, a);
  drain(sched, model, {{1, 1}}, outputs);  // a's first 8 tokens are now cached

  sched.add(2, a);
  sched.want_prompt_logits(2);
  std::vector<int32_t> scored_positions;
  for (int step = 0; step < 3; ++step) {
    const StepPlan plan = run_step(sched, model);
    ASSERT_EQ(plan.seq_ids, std::vector<SeqId>{2});
    for (const StepPlan::PromptRows& p : plan.prompt_rows) {
      EXPECT_EQ(p.seq_index, 0);
      for (int32_t r = p.begin; r < p.end; ++r) scored_positions.push_back(plan.positions[r]);
    }
    const std::vector<int32_t> rows = plan.logit_rows();
    EXPECT_EQ(
        rows.size(),
        plan.sample_indices.size() +
            (plan.prompt_rows.empty() ? 0 : plan.prompt_rows[0].end - plan.prompt_rows[0].begin));
  }
  // Positions 0..8 score tokens 1..9; position 9 is the sampling row of the last chunk.
  EXPECT_EQ(scored_positions, std::vector<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(sched.find(2)->num_cached_prompt_tokens(), 0) << "no prefix reuse";
  EXPECT_EQ(sched.find(2)->num_output_tokens(), 1);
}

TEST(Scheduler, ExactlyCachedPromptComputesItsLastBlock) {
  Scheduler sched(cfg(32, 4));
  FakeModel model(sched.config());
  std::map<SeqId, std::vector<int32_t>> outputs;
  const auto a = iota_tokens(16);
  sched.add(1, a);
  drain(sched, model, {{1, 1}}, outputs);
  sched.add(2, a);
  const StepPlan plan = run_step(sched, model);
  EXPECT_EQ(sched.find(2)->num_cached_prompt_tokens(), 12);
  EXPECT_EQ(plan.num_tokens(), 4);
  EXPECT_EQ(plan.sample_indices, std::vector<int32_t>{0});
}

}  // namespace
}  // namespace ps
