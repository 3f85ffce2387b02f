// SchedulingPolicy::kPriority (issue #39): waiting sequences by (priority, arrival), the
// lowest-priority running sequence preempted first, and a waiting sequence preempting strictly
// lower ones for blocks or a seat. Every step is checked (run_step: plan + integrity), and every
// preempted sequence still produces its alone-output (recompute keeps greedy text).
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
using testing::iota_tokens;
using testing::reference_output;
using testing::run_step;

SchedulerConfig cfg(SchedulingPolicy policy, int32_t blocks, int32_t bs, int32_t max_seqs = 8) {
  SchedulerConfig c;
  c.num_blocks = blocks;
  c.block_size = bs;
  c.max_num_seqs = max_seqs;
  c.max_batched_tokens = 2048;
  c.policy = policy;
  return c;
}

// Sequences 1 and 2 (3-token prompts, priority `low`) are admitted and run a step; then 3 (one
// token, priority `urgent`) arrives. Returns the plan of the step after its arrival.
StepPlan urgent_after_two(Scheduler& sched, FakeModel& model, int32_t low, int32_t urgent) {
  sched.add(1, iota_tokens(3), {}, low);
  sched.add(2, iota_tokens(3, 30), {}, low);
  EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{1, 2}));
  sched.add(3, {77}, {}, urgent);
  return run_step(sched, model);
}

TEST(PriorityScheduling, WaitingQueueIsOrderedByPriorityThenArrival) {
  Scheduler sched(cfg(SchedulingPolicy::kPriority, 64, 4));
  sched.add(1, {1}, {}, 5);
  sched.add(2, {2}, {}, 1);
  sched.add(3, {3}, {}, 5);
  sched.add(4, {4}, {}, 0);
  sched.add(5, {5}, {}, 1);
  sched.add(6, {6}, {}, -3);  // negative values are allowed and go first (vLLM's too)
  EXPECT_EQ(sched.waiting_ids(), (std::vector<SeqId>{6, 4, 2, 5, 1, 3}));
  sched.check_integrity();
  const StepPlan plan = sched.schedule();
  EXPECT_EQ(plan.seq_ids, (std::vector<SeqId>{6, 4, 2, 5, 1, 3}));  // admitted in that order
}

TEST(PriorityScheduling, FcfsIgnoresPriorities) {
  Scheduler sched(cfg(SchedulingPolicy::kFcfs, 64, 4));
  sched.add(1, {1}, {}, 5);
  sched.add(2, {2}, {}, 1);
  sched.add(3, {3}, {}, 0);
  EXPECT_EQ(sched.waiting_ids(), (std::vector<SeqId>{1, 2, 3}));
}

// 4 blocks of 2: two 3-token prompts fill the pool. A third request can only get in by taking
// a running sequence's blocks.
TEST(PriorityScheduling, UrgentRequestPreemptsALowerOneForBlocks) {
  Scheduler sched(cfg(SchedulingPolicy::kPriority, 4, 2));
  FakeModel model(sched.config());
  const StepPlan plan = urgent_after_two(sched, model, 5, 0);
  // 1 and 2 decode first; 3 then takes 2's blocks (2 is the newest of the lowest priority).
  EXPECT_EQ(plan.seq_ids, (std::vector<SeqId>{1, 3}));
  EXPECT_EQ(plan.preempted, std::vector<SeqId>{2});
  EXPECT_EQ(sched.find(2)->status(), SeqStatus::kWaiting);
  EXPECT_EQ(sched.find(3)->status(), SeqStatus::kRunning);

  std::map<SeqId, std::vector<int32_t>> outputs;
  drain(sched, model, {{1, 4}, {2, 4}, {3, 4}}, outputs);
  EXPECT_EQ(outputs[1], reference_output(iota_tokens(3), 4));
  EXPECT_EQ(outputs[2], reference_output(iota_tokens(3, 30), 4));
  EXPECT_EQ(outputs[3], reference_output({77}, 4));
}

TEST(PriorityScheduling, FcfsMakesTheSameRequestWait) {
  Scheduler sched(cfg(SchedulingPolicy::kFcfs, 4, 2));
  FakeModel model(sched.config());
  const StepPlan plan = urgent_after_two(sched, model, 5, 0);
  EXPECT_EQ(plan.seq_ids, (std::vector<SeqId>{1, 2}));
  EXPECT_TRUE(plan.preempted.empty());
  EXPECT_EQ(sched.find(3)->status(), SeqStatus::kWaiting);
}

TEST(PriorityScheduling, EqualPriorityNeverPreemptsForAdmission) {
  Scheduler sched(cfg(SchedulingPolicy::kPriority, 4, 2));
  FakeModel model(sched.config());
  const StepPlan plan = urgent_after_two(sched, model, 2, 2);
  EXPECT_EQ(plan.seq_ids, (std::vector<SeqId>{1, 2}));
  EXPECT_TRUE(plan.preempted.empty());
}

// When a decoding sequence needs a block, the lowest-priority running one gives its blocks up,
// not the newest (which fcfs would pick).
TEST(PriorityScheduling, DecodeGrowthPreemptsTheLowestPriorityNotTheNewest) {
  for (SchedulingPolicy policy : {SchedulingPolicy::kPriority, SchedulingPolicy::kFcfs}) {
    Scheduler sched(cfg(policy, 6, 2));
    FakeModel model(sched.config());
    sched.add(1, iota_tokens(3), {}, 0);
    sched.add(2, iota_tokens(3, 30), {}, 9);
    EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{1, 2}));
    sched.add(3, iota_tokens(3, 60), {}, 0);  // the newest: fcfs's victim
    EXPECT_EQ(run_step(sched, model).seq_ids, (std::vector<SeqId>{1, 2, 3}));  // 6 blocks
    const StepPlan plan = run_step(sched, model);  // 1 and 2 reach position 4: a 3rd block
    const SeqId expected = policy == SchedulingPolicy::kPriority ? 2 : 3;
    EXPECT_EQ(plan.preempted, std::vector<SeqId>{expected});
    std::map<SeqId, std::vector<int32_t>> outputs;
    drain(sched, model, {{1, 5}, {2, 5}, {3, 5}}, outputs);
    EXPECT_EQ(outputs[1], reference_output(iota_tokens(3), 5));
    EXPECT_EQ(outputs[2], reference_output(iota_tokens(3, 30), 5));
    EXPECT_EQ(outputs[3], reference_output(iota_tokens(3, 60), 5));
  }
}

// max_num_seqs 2, both seats taken by priority-5 sequences: a priority-0 request takes a seat
// from the newest of them.
TEST(PriorityScheduling, UrgentRequestTakesASeatFromALowerOne) {
  Scheduler sched(cfg(SchedulingPolicy::kPriority, 64, 4, /*max_seqs=*/2));
  FakeModel model(sched.config());
  const StepPlan plan = urgent_after_two(sched, model, 5, 0);
  EXPECT_EQ(plan.seq_ids, (std::vector<SeqId>{1, 3}));
  EXPECT_EQ(plan.preempted, std::vector<SeqId>{2});
  EXPECT_EQ(sched.num_running(), 2);
  std::map<SeqId, std::vector<int32_t>> outputs;
  drain(sched, model, {{1, 3}, {2, 3}, {3, 3}}, outputs);
  EXPECT_EQ(outputs[2], reference_output(iota_tokens(3, 30), 3));
  EXPECT_EQ(outputs[3], reference_output({77}, 3));
}

// A preempted sequence goes back into the waiting queue at its (priority, arrival) place: behind
// waiting sequences of higher priority, ahead of newer ones of its own.
TEST(PriorityScheduling, PreemptedSequenceRequeuesByPriority) {
  Scheduler sched(cfg(SchedulingPolicy::kPriority, 4, 2));
  FakeModel model(sched.config());
  sched.add(1, iota_tokens(3), {}, 1);
  sched.add(2, iota_tokens(3, 30), {}, 5);
  run_step(sched, model);
  sched.add(3, {77}, {}, 5);  // newer than 2, same priority
  sched.add(4, {78}, {}, 0);
  const StepPlan plan = run_step(sched, model);  // 4 takes 2's blocks; 3 waits
  EXPECT_EQ(plan.preempted, std::vector<SeqId>{2});
  EXPECT_EQ(sched.waiting_ids(), (std::vector<SeqId>{2, 3}));
}

}  // namespace
}  // namespace ps
