// Recurrent-state slots (kvcache/state_slots.h, issue #35): the pool's transitions and integrity,
// and the scheduler giving each running sequence of a recurrent model one slot: admission waits
// for a free slot, finish and preemption give it back, and no prefix is reused. A fake
// recurrent model keeps its state only in the slots the plans name, so a slot shared, lost or
// not restarted at position 0 changes the tokens it samples from the reference's.
#include "kvcache/state_slots.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "scheduler/scheduler.h"
#include "tests/iota_tokens.h"
#include "tests/scheduler/fake_model.h"

namespace ps {
namespace {

using testing::check_plan;
using testing::fold;
using testing::iota_tokens;
using testing::kVocab;
using testing::reference_output;

TEST(StateSlotPool, AcquireAndReleaseKeepTheCountsExact) {
  StateSlotPool pool(3);
  EXPECT_EQ(pool.num_free(), 3);
  EXPECT_EQ(pool.acquire(10), 0);
  EXPECT_EQ(pool.acquire(11), 1);
  EXPECT_EQ(pool.num_in_use(), 2);
  EXPECT_EQ(pool.slot_of(11), 1);
  EXPECT_EQ(pool.slot_of(12), -1);
  EXPECT_THROW(pool.acquire(10), std::logic_error);  // one slot per sequence
  pool.release(10);
  pool.release(10);  // unknown now: no-op
  EXPECT_EQ(pool.num_free(), 2);
  EXPECT_EQ(pool.acquire(12), 0);  // the most recently freed first
  EXPECT_EQ(pool.acquire(13), 2);
  EXPECT_THROW(pool.acquire(14), std::logic_error);  // none free
  pool.check_integrity();
  EXPECT_THROW(StateSlotPool(-1), std::invalid_argument);
}

// The state of each slot is a running hash of the tokens fed to it, restarted when a sequence's
// first new token is at position 0; it samples as FakeModel does from the whole context.
class FakeRecurrentModel {
 public:
  explicit FakeRecurrentModel(int32_t slots) : state_(size_t(slots)), next_pos_(size_t(slots)) {}

  std::vector<int32_t> run(const StepPlan& plan) {
    EXPECT_EQ(plan.state_slots.size(), size_t(plan.num_seqs()));
    std::vector<uint64_t> after(size_t(plan.num_seqs()));
    for (int32_t s = 0; s < plan.num_seqs(); ++s) {
      const int32_t slot = plan.state_slots.at(size_t(s));
      const int32_t begin = plan.query_start[s], end = plan.query_start[s + 1];
      if (plan.positions[begin] == 0) {
        state_.at(size_t(slot)) = 1469598103934665603ULL;
        next_pos_.at(size_t(slot)) = 0;
      }
      EXPECT_EQ(next_pos_.at(size_t(slot)), plan.positions[begin])
          << "sequence " << plan.seq_ids[s] << " continues slot " << slot << " out of order";
      for (int32_t r = begin; r < end; ++r)
        state_[size_t(slot)] = fold(state_[size_t(slot)], plan.token_ids[r]);
      next_pos_[size_t(slot)] = plan.positions[end - 1] + 1;
      after[size_t(s)] = state_[size_t(slot)];
    }
    std::vector<int32_t> sampled;
    for (int32_t s : plan.sample_indices) {
      sampled.push_back(static_cast<int32_t>((after[size_t(s)] >> 17) % kVocab));
    }
    return sampled;
  }

 private:
  std::vector<uint64_t> state_;
  std::vector<int32_t> next_pos_;
};

SchedulerConfig recurrent_config(int32_t slots, int32_t blocks, int32_t tokens) {
  SchedulerConfig c;
  c.num_blocks = blocks;
  c.block_size = 4;
  c.max_num_seqs = 8;
  c.max_batched_tokens = tokens;
  c.num_state_slots = slots;
  return c;
}

struct SlotRun {
  std::map<SeqId, std::vector<int32_t>> outputs;
  int32_t max_running = 0;
};

SlotRun drain(Scheduler& sched, FakeRecurrentModel& model,
              const std::map<SeqId, int32_t>& max_tokens) {
  SlotRun run;
  for (int step = 0; step < 10000 && sched.has_unfinished(); ++step) {
    StepPlan plan = sched.schedule();
    check_plan(plan, sched);
    sched.postprocess(plan, model.run(plan));
    sched.check_integrity();  // slots in use == running, each running one holds its own
    EXPECT_EQ(sched.state_slots().num_in_use() + sched.state_slots().num_free(),
              sched.state_slots().num_slots());
    run.max_running = std::max(run.max_running, sched.num_running());
    for (int32_t s : plan.sample_indices) {
      const Sequence* seq = sched.find(plan.seq_ids[s]);
      if (seq == nullptr || seq->num_output_tokens() < max_tokens.at(seq->id())) continue;
      run.outputs[seq->id()].assign(seq->output_tokens().begin(), seq->output_tokens().end());
      sched.finish(seq->id());
    }
  }
  EXPECT_FALSE(sched.has_unfinished());
  EXPECT_EQ(sched.state_slots().num_free(), sched.state_slots().num_slots());
  return run;
}

TEST(StateSlotScheduling, AtMostOneSequencePerSlotRunsAndEachGeneratesAsAlone) {
  Scheduler sched(recurrent_config(2, 256, 16));  // prompts of up to 30 tokens: chunked
  FakeRecurrentModel model(2);
  std::map<SeqId, int32_t> max_tokens;
  for (SeqId id = 1; id <= 5; ++id) {
    sched.add(id, iota_tokens(int32_t(5 * id + 5), int32_t(100 * id)));
    max_tokens[id] = 6;
  }
  const SlotRun run = drain(sched, model, max_tokens);
  EXPECT_EQ(run.max_running, 2);  // the slots, not max_num_seqs (8), bound the batch
  for (SeqId id = 1; id <= 5; ++id) {
    EXPECT_EQ(run.outputs.at(id),
              reference_output(iota_tokens(int32_t(5 * id + 5), int32_t(100 * id)), 6))
        << "sequence " << id;
  }
}

TEST(StateSlotScheduling, PreemptionGivesTheSlotBackAndRecomputesTheState) {
  Scheduler sched(recurrent_config(3, 6, 64));  // 24 token slots for 3 sequences growing to 14
  FakeRecurrentModel model(3);
  std::map<SeqId, int32_t> max_tokens;
  for (SeqId id = 1; id <= 3; ++id) {
    sched.add(id, iota_tokens(6, int32_t(50 * id)));
    max_tokens[id] = 8;
  }
  const SlotRun run = drain(sched, model, max_tokens);
  EXPECT_GT(sched.num_preemptions(), 0u) << "the pool was meant to force preemption";
  for (SeqId id = 1; id <= 3; ++id) {
    EXPECT_EQ(run.outputs.at(id), reference_output(iota_tokens(6, int32_t(50 * id)), 8));
  }
}

TEST(StateSlotScheduling, FinishingAWaitingOrRunningSequenceFreesItsSlot) {
  Scheduler sched(recurrent_config(1, 64, 64));
  FakeRecurrentModel model(1);
  sched.add(1, iota_tokens(5));
  sched.add(2, iota_tokens(5, 40));
  StepPlan plan = sched.schedule();
  EXPECT_EQ(plan.seq_ids, std::vector<SeqId>{1});  // one slot: 2 waits
  EXPECT_EQ(plan.state_slots, std::vector<int32_t>{0});
  sched.postprocess(plan, model.run(plan));
  sched.finish(1);  // an abort mid-stream
  sched.check_integrity();
  EXPECT_EQ(sched.state_slots().num_free(), 1);
  plan = sched.schedule();
  EXPECT_EQ(plan.seq_ids, std::vector<SeqId>{2});
  sched.postprocess(plan, model.run(plan));
  sched.finish(2);
  sched.check_integrity();
  EXPECT_EQ(sched.state_slots().num_free(), 1);
}

// The state at the end of a cached prefix is not kept, so a recurrent model computes every
// prompt token, while the same prompts without state slots hit the prefix cache.
TEST(StateSlotScheduling, NoPrefixIsReusedWithoutItsState) {
  for (int32_t slots : {0, 2}) {
    Scheduler sched(recurrent_config(slots, 64, 64));
    sched.add(1, iota_tokens(13));
    StepPlan plan = sched.schedule();
    sched.postprocess(plan, std::vector<int32_t>(plan.sample_indices.size(), 7));
    sched.finish(1);
    sched.add(2, iota_tokens(13));
    plan = sched.schedule();
    EXPECT_EQ(plan.num_prefill_tokens, slots > 0 ? 13 : 1) << slots << " slots";
    EXPECT_EQ(plan.state_slots.size(), slots > 0 ? 1u : 0u);
  }
}

}  // namespace
}  // namespace ps
