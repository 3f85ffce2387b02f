// Request priorities and deadlines through the engine's public API (issue #39). Time is the
// engine's deadline clock, moved by the test, so no check races the machine's speed: a request
// is known to be waiting or running (its events, the stats) before its deadline is made to pass.
// The model's context is long (kLong tokens) so that a "long" request cannot run out while the
// test thread is descheduled on a loaded machine; such requests are cancelled, never awaited.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "engine/engine.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/test_model.h"

namespace ps {
namespace {

using testing_util::collect;
using testing_util::Collected;
using testing_util::expect_settled;
using testing_util::random_prompt;
using testing_util::small_config;
using testing_util::small_tokenizer;
using testing_util::submit_ok;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// The first event of a request: it has been scheduled.
Collected first_event(RequestStream& stream) {
  Collected c;
  RequestOutput ev;
  EXPECT_TRUE(stream.next(&ev, 60s));
  c.tokens = ev.token_ids;
  c.text = ev.text;
  if (ev.finish) {
    c.finish_events = 1;
    c.last = ev;
  }
  return c;
}

// Waits (bounded) until the engine's stats satisfy `pred`.
template <typename Pred>
bool wait_stats(const Engine& engine, Pred pred) {
  for (int i = 0; i < 6000; ++i) {
    if (pred(engine.stats())) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

constexpr int32_t kLong = 30000;

ModelConfig long_context_config() {
  ModelConfig m = small_config();
  m.max_position_embeddings = 32768;
  return m;
}

class ScheduledEngineTest : public ::testing::Test {
 protected:
  EngineConfig config(SchedulingPolicy policy = SchedulingPolicy::kFcfs) {
    EngineConfig c;
    c.num_blocks = 2 * 32768 / 16;
    c.block_size = 16;
    c.max_num_seqs = 8;
    c.check_integrity_every_step = true;
    c.runner.linear_mode = LinearMode::packed;
    c.scheduling_policy = policy;
    c.deadline_clock = [this] { return SteadyClock::now() + skew_.load() * 1s; };
    return c;
  }
  SteadyClock::time_point now() const { return SteadyClock::now() + skew_.load() * 1s; }
  void advance(int seconds) { skew_ += seconds; }

  static Request long_request(std::vector<int32_t> prompt, int32_t max_tokens) {
    Request r{std::move(prompt), {}};
    r.params.max_tokens = max_tokens;
    r.params.ignore_eos = true;
    r.params.temperature = 0;
    return r;
  }

  std::atomic<int> skew_{0};
};

TEST_F(ScheduledEngineTest, QueueDeadlineRefusesAWaitingRequestAndLeavesTheRunningOne) {
  EngineConfig c = config();
  c.max_num_seqs = 1;  // B waits while A runs
  Engine engine(random_model(long_context_config(), 21), small_tokenizer(), c);
  auto a = submit_ok(engine, long_request({5, 6, 7}, kLong));
  first_event(*a);
  std::mt19937 rng(1);
  Request b = long_request(random_prompt(rng, 30, 512), 10);
  b.queue_deadline = now() + 10s;
  auto bs = submit_ok(engine, b);
  ASSERT_TRUE(wait_stats(engine, [](const EngineStats& s) { return s.waiting == 1; }));
  advance(20);
  Collected got = collect(*bs);
  EXPECT_EQ(got.finish_events, 1);
  EXPECT_EQ(*got.last.finish, FinishReason::kQueueTimeout);
  EXPECT_TRUE(got.tokens.empty());
  EXPECT_EQ(got.last.completion_tokens, 0);
  EXPECT_EQ(got.last.cached_tokens, 0);
  const EngineStats s = engine.stats();
  EXPECT_EQ(s.requests_queue_timeout_total, 1u);
  EXPECT_EQ(s.requests_deadline_total, 0u);
  EXPECT_FALSE(a->finished());  // A had no deadline: it goes on
  a->cancel();
  collect(*a);
  expect_settled(engine);
}

TEST_F(ScheduledEngineTest, DeadlineStopsARunningRequestWithWhatItGenerated) {
  Engine engine(random_model(long_context_config(), 21), small_tokenizer(), config());
  std::mt19937 rng(2);
  const std::vector<int32_t> prompt = random_prompt(rng, 20, 512);
  Request r = long_request(prompt, kLong);
  r.deadline = now() + 10s;
  auto stream = submit_ok(engine, r);
  Collected got = first_event(*stream);  // running
  advance(20);
  got = collect(*stream, got);
  EXPECT_EQ(got.finish_events, 1);
  EXPECT_EQ(*got.last.finish, FinishReason::kLength);
  EXPECT_EQ(got.last.finish_detail, kDeadlineDetail);
  EXPECT_GE(got.tokens.size(), 1u);
  EXPECT_LT(got.tokens.size(), static_cast<size_t>(kLong));
  EXPECT_EQ(got.last.completion_tokens, static_cast<int32_t>(got.tokens.size()));
  EXPECT_EQ(engine.stats().requests_deadline_total, 1u);
  EXPECT_EQ(engine.stats().requests_queue_timeout_total, 0u);
  expect_settled(engine);

  // What it sent is exactly the start of the same request run without a deadline.
  auto alone = submit_ok(engine, long_request(prompt, static_cast<int32_t>(got.tokens.size())));
  Collected full = collect(*alone);
  EXPECT_EQ(full.tokens, got.tokens);
  EXPECT_EQ(full.text, got.text);
}

TEST_F(ScheduledEngineTest, QueueDeadlineNoLongerAppliesOnceScheduled) {
  Engine engine(random_model(long_context_config(), 21), small_tokenizer(), config());
  Request r = long_request({9, 8, 7}, 40);
  r.queue_deadline = now() + 10s;
  auto stream = submit_ok(engine, r);
  Collected got = first_event(*stream);
  advance(20);
  got = collect(*stream, got);
  EXPECT_EQ(*got.last.finish, FinishReason::kLength);
  EXPECT_EQ(got.last.finish_detail, "");
  EXPECT_EQ(got.tokens.size(), 40u);
  EXPECT_EQ(engine.stats().requests_queue_timeout_total, 0u);
  expect_settled(engine);
}

TEST_F(ScheduledEngineTest, AnAlreadyPassedDeadlineRefusesBeforeAnyStep) {
  Engine engine(random_model(long_context_config(), 21), small_tokenizer(), config());
  Request r = long_request({9, 8, 7}, 40);
  r.deadline = now() - 1s;  // the total deadline of a request never scheduled refuses it too
  Collected got = collect(*submit_ok(engine, r));
  EXPECT_EQ(*got.last.finish, FinishReason::kQueueTimeout);
  EXPECT_TRUE(got.tokens.empty());
  expect_settled(engine);
}

TEST_F(ScheduledEngineTest, FcfsRefusesAPriority) {
  Engine engine(random_model(long_context_config(), 21), small_tokenizer(), config());
  Request r = long_request({9, 8, 7}, 4);
  r.priority = 3;
  auto res = engine.submit(r);
  ASSERT_TRUE(std::holds_alternative<SubmitError>(res));
  const SubmitError& e = std::get<SubmitError>(res);
  EXPECT_EQ(e.kind, SubmitError::Kind::kInvalid);
  EXPECT_EQ(e.param, "priority");
  EXPECT_NE(e.message.find("--scheduling-policy priority"), std::string::npos) << e.message;
}

// Both seats held by priority-5 requests: a priority-0 request takes one at once (preempting
// the newer) and finishes while both still run (they are thousands of steps long); both then
// finish with exactly the greedy tokens each produces alone.
TEST_F(ScheduledEngineTest, UrgentRequestPreemptsAndEveryoneKeepsTheirGreedyText) {
  EngineConfig c = config(SchedulingPolicy::kPriority);
  c.max_num_seqs = 2;
  c.num_blocks = 512;  // enough for both; fewer blocks make each step's integrity check cheap
  Engine engine(random_model(long_context_config(), 21), small_tokenizer(), c);
  std::mt19937 rng(3);
  const std::vector<int32_t> pa = random_prompt(rng, 24, 512), pb = random_prompt(rng, 24, 512);
  constexpr int32_t kTokens = 3000;
  Request a = long_request(pa, kTokens), b = long_request(pb, kTokens);
  a.priority = b.priority = 5;
  auto as = submit_ok(engine, a);
  auto bs = submit_ok(engine, b);
  Collected ga = first_event(*as), gb = first_event(*bs);
  Request urgent = long_request({1, 2, 3, 4}, 8);
  urgent.priority = 0;
  Collected gu = collect(*submit_ok(engine, urgent));
  EXPECT_EQ(gu.tokens.size(), 8u);
  EXPECT_EQ(engine.stats().preemptions_total, 1u);
  ga = collect(*as, ga);
  gb = collect(*bs, gb);
  EXPECT_EQ(*ga.last.finish, FinishReason::kLength);
  EXPECT_EQ(*gb.last.finish, FinishReason::kLength);
  expect_settled(engine);
  EXPECT_EQ(engine.stats().preemptions_total, 1u);

  for (const auto& [prompt, got] : {std::pair{pa, ga}, std::pair{pb, gb}}) {
    EXPECT_EQ(got.tokens.size(), static_cast<size_t>(kTokens));
    EXPECT_EQ(collect(*submit_ok(engine, long_request(prompt, kTokens))).tokens, got.tokens);
  }
}

}  // namespace
}  // namespace ps
