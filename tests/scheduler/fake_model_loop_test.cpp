// Drives schedule() -> fake model -> postprocess() -> finish() over many random requests with
// small pools, checking every plan, integrity after every step, and that each request's
// output equals the output it has alone (so preemption, chunking and prefix hits are exact).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/scheduler.h"
#include "tests/scheduler/fake_model.h"

namespace ps {
namespace {

using testing::check_plan;
using testing::FakeModel;
using testing::reference_output;

struct LoopCase {
  std::string name;
  SchedulerConfig config;
  int32_t num_requests;
  bool collide_hashes;
  bool expect_preemption;
};

struct Request {
  SeqId id;
  std::vector<int32_t> prompt;
  int32_t max_tokens;
  int32_t arrival_step;
};

// Prompts share a few "system prompts" so the prefix cache has something to hit. Each
// request fits the pool alone (prompt + max_tokens), so nothing is rejected.
std::vector<Request> make_requests(int32_t n, const SchedulerConfig& config, uint32_t seed) {
  std::mt19937 rng(seed);
  const int32_t capacity = config.num_blocks * config.block_size;
  std::vector<std::vector<int32_t>> heads(3);
  for (auto& h : heads) {
    const int32_t len = std::uniform_int_distribution<int32_t>(0, capacity / 3)(rng);
    for (int32_t i = 0; i < len; ++i) h.push_back(rng() % 50);
  }
  std::vector<Request> reqs;
  int32_t step = 0;
  for (int32_t i = 0; i < n; ++i) {
    Request r;
    r.id = 1000 + i;
    r.prompt = heads[rng() % heads.size()];
    const int32_t extra = std::uniform_int_distribution<int32_t>(1, capacity / 4)(rng);
    for (int32_t k = 0; k < extra; ++k) r.prompt.push_back(rng() % 50);
    const int32_t room = capacity - static_cast<int32_t>(r.prompt.size());
    r.max_tokens = std::uniform_int_distribution<int32_t>(1, std::max(1, std::min(room, 24)))(rng);
    step += std::uniform_int_distribution<int32_t>(0, 2)(rng);
    r.arrival_step = step;
    reqs.push_back(std::move(r));
  }
  return reqs;
}

class FakeModelLoop : public ::testing::TestWithParam<LoopCase> {};

TEST_P(FakeModelLoop, EveryRequestFinishesWithItsAloneOutput) {
  LoopCase c = GetParam();
  if (c.collide_hashes) {
    c.config.block_hasher = [](uint64_t, std::span<const int32_t>) { return uint64_t{7}; };
  }
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Scheduler sched(c.config);
    FakeModel model(c.config);
    const std::vector<Request> reqs = make_requests(c.num_requests, c.config, seed);
    std::map<SeqId, const Request*> by_id;
    std::map<SeqId, std::vector<int32_t>> outputs;
    size_t next = 0;
    int32_t step = 0;
    for (; step < 100000 && (next < reqs.size() || sched.has_unfinished()); ++step) {
      for (; next < reqs.size() && reqs[next].arrival_step <= step; ++next) {
        by_id[reqs[next].id] = &reqs[next];
        sched.add(reqs[next].id, reqs[next].prompt);
      }
      const StepPlan plan = sched.schedule();
      ASSERT_NO_FATAL_FAILURE(check_plan(plan, sched));
      if (plan.empty()) {
        // Only legal while nothing can run: no livelock with work pending.
        ASSERT_EQ(sched.num_running(), 0);
        ASSERT_EQ(sched.num_waiting(), 0);
      }
      const std::vector<int32_t> sampled = model.run(plan);
      sched.postprocess(plan, sampled);
      for (int32_t s : plan.sample_indices) {
        const SeqId id = plan.seq_ids[s];
        const Sequence* seq = sched.find(id);
        ASSERT_NE(seq, nullptr);
        if (seq->num_output_tokens() >= by_id[id]->max_tokens) {
          ASSERT_EQ(seq->num_output_tokens(), by_id[id]->max_tokens);
          outputs[id].assign(seq->output_tokens().begin(), seq->output_tokens().end());
          sched.finish(id);
          EXPECT_EQ(sched.find(id), nullptr);
        }
      }
      ASSERT_TRUE(sched.take_rejected().empty());
      ASSERT_NO_THROW(sched.check_integrity());
    }
    ASSERT_FALSE(sched.has_unfinished()) << "gave up after " << step << " steps";
    ASSERT_EQ(outputs.size(), reqs.size());
    for (const Request& r : reqs) {
      EXPECT_EQ(outputs[r.id], reference_output(r.prompt, r.max_tokens)) << "request " << r.id;
    }
    // Everything released: blocks are free or cached, none active.
    const BlockManager& bm = sched.block_manager();
    EXPECT_EQ(bm.num_active_blocks(), 0);
    EXPECT_EQ(bm.num_free_blocks() + bm.num_cached_blocks(), bm.num_blocks());
    if (c.expect_preemption) {
      EXPECT_GT(sched.num_preemptions(), 0u);
    }
    if (c.config.enable_prefix_caching && !c.collide_hashes) {
      EXPECT_GT(bm.prefix_hits(), 0u);
    }
  }
}

SchedulerConfig cfg(int32_t blocks, int32_t bs, int32_t seqs, int32_t tokens, bool prefix) {
  SchedulerConfig c;
  c.num_blocks = blocks;
  c.block_size = bs;
  c.max_num_seqs = seqs;
  c.max_batched_tokens = tokens;
  c.enable_prefix_caching = prefix;
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Pools, FakeModelLoop,
    ::testing::Values(LoopCase{"tiny_pool", cfg(12, 4, 8, 32, true), 60, false, true},
                      LoopCase{"tiny_pool_no_prefix", cfg(12, 4, 8, 32, false), 60, false, true},
                      LoopCase{"tiny_pool_colliding_hash", cfg(12, 4, 8, 32, true), 60, true, true},
                      LoopCase{"block_size_1", cfg(40, 1, 6, 16, true), 40, false, true},
                      LoopCase{"budget_below_seqs", cfg(24, 4, 8, 3, true), 40, false, false},
                      LoopCase{"roomy_pool", cfg(256, 16, 16, 64, true), 60, false, false}),
    [](const ::testing::TestParamInfo<LoopCase>& info) { return info.param.name; });

}  // namespace
}  // namespace ps
