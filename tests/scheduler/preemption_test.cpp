// Preemption by recompute when the pool runs out (docs/architecture.md §3).
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
using testing::finish_done;
using testing::reference_output;
using testing::run_step;

using testing::iota_tokens;

SchedulerConfig cfg(int32_t blocks, int32_t bs, int32_t tokens = 2048) {
  SchedulerConfig c;
  c.num_blocks = blocks;
  c.block_size = bs;
  c.max_num_seqs = 8;
  c.max_batched_tokens = tokens;
  return c;
}

TEST(Preemption, NewestIsPreemptedAndRequeuedAtTheFront) {
  Scheduler sched(cfg(4, 2));  // 8 slots
  FakeModel model(sched.config());
  const std::map<SeqId, int32_t> max_tokens = {{1, 4}, {2, 4}, {3, 2}};
  std::map<SeqId, std::vector<int32_t>> outputs;
  sched.add(1, iota_tokens(3));
  sched.add(2, iota_tokens(3, 30));
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{1, 2}));  // 2 blocks each
  sched.add(3, {77});
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{1, 2}));  // 3 cannot fit
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 4);

  // 1 needs a third block for position 4: 2, the newest, gives its blocks up.
  const StepPlan plan = run_step(sched, model);
  EXPECT_EQ(plan.seq_ids, std::vector<SeqId>{1});
  EXPECT_EQ(plan.preempted, std::vector<SeqId>{2});
  EXPECT_EQ(sched.waiting_ids(), (std::vector<SeqId>{2, 3}));
  const Sequence* two = sched.find(2);
  EXPECT_EQ(two->status(), SeqStatus::kWaiting);
  EXPECT_EQ(two->num_computed_tokens(), 0);
  EXPECT_EQ(two->num_output_tokens(), 2);  // kept: recomputed, not resampled
  EXPECT_EQ(two->num_preemptions(), 1);
  EXPECT_TRUE(two->block_table().empty());
  EXPECT_EQ(sched.num_preemptions(), 1u);
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 3);  // only 1's blocks

  const uint64_t hits_before = sched.block_manager().prefix_hits();
  drain(sched, model, max_tokens, outputs);
  // 2 came back before 3 and found its first block in the prefix cache.
  EXPECT_GT(sched.block_manager().prefix_hits(), hits_before);
  EXPECT_EQ(outputs[1], reference_output(iota_tokens(3), 4));
  EXPECT_EQ(outputs[2], reference_output(iota_tokens(3, 30), 4));
  EXPECT_EQ(outputs[3], reference_output({77}, 2));
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 0);
}

TEST(Preemption, ReadmissionKeepsFifoOrder) {
  Scheduler sched(cfg(4, 2));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(3));
  sched.add(2, iota_tokens(3, 30));
  run_step(sched, model);
  sched.add(3, {77});
  run_step(sched, model);
  run_step(sched, model);  // preempts 2
  std::vector<SeqId> admitted;
  std::map<SeqId, std::vector<int32_t>> outputs;
  for (int i = 0; i < 50 && sched.has_unfinished(); ++i) {
    const StepPlan plan = run_step(sched, model);
    for (SeqId id : plan.seq_ids) {
      if (id != 1 && std::find(admitted.begin(), admitted.end(), id) == admitted.end()) {
        admitted.push_back(id);
      }
    }
    finish_done(sched, plan, {{1, 4}, {2, 4}, {3, 2}}, outputs);
  }
  EXPECT_EQ(admitted, (std::vector<SeqId>{2, 3}));
}

TEST(Preemption, DecodingSequencePreemptsItselfWhenNewest) {
  Scheduler sched(cfg(4, 2));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(3));      // 2 blocks, room for position 3
  sched.add(2, iota_tokens(4, 30));  // 2 full blocks: position 4 needs a third
  run_step(sched, model);
  const StepPlan plan = run_step(sched, model);
  EXPECT_EQ(plan.seq_ids, std::vector<SeqId>{1});
  EXPECT_EQ(plan.preempted, std::vector<SeqId>{2});
  std::map<SeqId, std::vector<int32_t>> outputs;
  drain(sched, model, {{1, 3}, {2, 3}}, outputs);
  EXPECT_EQ(outputs[1], reference_output(iota_tokens(3), 3));
  EXPECT_EQ(outputs[2], reference_output(iota_tokens(4, 30), 3));
}

TEST(Preemption, PartialPrefillShrinksThenPreemptsItself) {
  Scheduler sched(cfg(4, 4, /*tokens=*/4));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(4));
  run_step(sched, model);  // 1: 4 prompt tokens, 1 block
  sched.add(2, iota_tokens(12, 40));
  StepPlan plan = run_step(sched, model);  // 1 decodes into a 2nd block; 2 gets 3 tokens
  EXPECT_EQ(plan.query_start, (std::vector<int32_t>{0, 1, 4}));
  plan = run_step(sched, model);  // 2 takes the last block
  EXPECT_EQ(plan.query_start, (std::vector<int32_t>{0, 1, 4}));
  EXPECT_EQ(sched.block_manager().num_available_blocks(), 0);
  plan = run_step(sched, model);  // room for 2 more tokens only: the chunk shrinks
  EXPECT_EQ(plan.query_start, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_TRUE(plan.preempted.empty());
  plan = run_step(sched, model);  // no room at all: 2 is the newest, so it yields
  EXPECT_EQ(plan.seq_ids, std::vector<SeqId>{1});
  EXPECT_EQ(plan.preempted, std::vector<SeqId>{2});
  EXPECT_EQ(sched.find(2)->num_computed_tokens(), 0);
  std::map<SeqId, std::vector<int32_t>> outputs;
  drain(sched, model, {{1, 6}, {2, 3}}, outputs);
  EXPECT_EQ(outputs[1], reference_output(iota_tokens(4), 6));
  EXPECT_EQ(outputs[2], reference_output(iota_tokens(12, 40), 3));
}

TEST(Preemption, HappensUnderATinyPoolAndEveryoneFinishes) {
  Scheduler sched(cfg(6, 2, /*tokens=*/8));
  FakeModel model(sched.config());
  std::map<SeqId, int32_t> max_tokens;
  for (SeqId id = 1; id <= 6; ++id) {
    sched.add(id, iota_tokens(2 + static_cast<int32_t>(id % 3), 100 * id));
    max_tokens[id] = 6;
  }
  std::map<SeqId, std::vector<int32_t>> outputs;
  drain(sched, model, max_tokens, outputs);
  EXPECT_GT(sched.num_preemptions(), 0u);
  for (SeqId id = 1; id <= 6; ++id) {
    EXPECT_EQ(outputs[id],
              reference_output(iota_tokens(2 + static_cast<int32_t>(id % 3), 100 * id), 6));
  }
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 0);
}

}  // namespace
}  // namespace ps
