// The engine thread end to end through its public API: submit, events, cancel, stats.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <thread>

#include "reference/naive_forward.h"
#include "reference/naive_generate.h"
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

class EngineTest : public ::testing::Test {
 protected:
  EngineConfig config() {
    EngineConfig c;
    c.num_blocks = 256;
    c.block_size = 16;
    c.max_num_seqs = 32;
    c.check_integrity_every_step = true;
    // Bitwise batch invariance (the seeded test below compares sampled tokens exactly) holds
    // for our packed kernel, whose rows do not depend on the batch (packed_kernels.h); OpenBLAS,
    // which --kernel auto may pick for some batch sizes, keeps it only within float tolerance.
    c.runner.linear_mode = LinearMode::packed;
    return c;
  }
  LoadedModel model = random_model(small_config(), 21);
};

TEST_F(EngineTest, GreedyMatchesTheNaiveGenerateOracle) {
  Engine engine(random_model(small_config(), 21), small_tokenizer(), config());
  std::mt19937 rng(1);
  for (int len : {1, 7, 33}) {
    Request r{random_prompt(rng, len, 512), {}};
    r.params.temperature = 0;
    r.params.max_tokens = 12;
    r.params.ignore_eos = true;
    auto want = naive_generate(*model.weights, r.prompt_ids, 12, 0.0f, 0, {});
    auto stream = submit_ok(engine, r);
    Collected got = collect(*stream);
    ASSERT_EQ(got.finish_events, 1);
    EXPECT_EQ(*got.last.finish, FinishReason::kLength);
    EXPECT_EQ(got.tokens, want) << "prompt length " << len;
    EXPECT_EQ(got.last.completion_tokens, 12);
    EXPECT_EQ(got.last.prompt_tokens, len);
  }
  expect_settled(engine);
}

TEST_F(EngineTest, SeededSampledRequestIsTheSameAloneAndInABatchOfSixteen) {
  std::mt19937 rng(2);
  Request target{random_prompt(rng, 20, 512), {}};
  target.params.temperature = 0.9f;
  target.params.top_p = 0.95f;
  target.params.seed = 1234;
  target.params.max_tokens = 24;
  target.params.ignore_eos = true;

  Engine engine(random_model(small_config(), 21), small_tokenizer(), config());
  auto alone = collect(*submit_ok(engine, target));

  std::vector<std::unique_ptr<RequestStream>> others;
  for (int i = 0; i < 15; ++i) {
    Request o{random_prompt(rng, 5 + i * 3, 512), {}};
    o.params.temperature = 1.0f;
    o.params.seed = 100 + i;
    o.params.max_tokens = 10 + i;
    o.params.ignore_eos = true;
    if (i == 0) engine.pause();  // all sixteen reach the scheduler before a step runs
    others.push_back(submit_ok(engine, o));
  }
  auto batched_stream = submit_ok(engine, target);
  engine.resume();
  auto batched = collect(*batched_stream);
  for (auto& s : others) EXPECT_EQ(collect(*s).finish_events, 1);
  EXPECT_EQ(alone.tokens, batched.tokens);
  EXPECT_EQ(alone.text, batched.text);
  EXPECT_GT(engine.stats().max_seqs_in_step, 1);

  // A different seed must give a different continuation (else the test proves nothing).
  target.params.seed = 4321;
  EXPECT_NE(collect(*submit_ok(engine, target)).tokens, alone.tokens);
  expect_settled(engine);
}

// Engine::pause() keeps what is submitted without stepping; resume() runs it all as one batch.
// No timing is asserted: a paused engine never emits, however long the wait.
TEST_F(EngineTest, PausedEngineHoldsRequestsUntilResumedThenRunsThemTogether) {
  Engine engine(random_model(small_config(), 21), small_tokenizer(), config());
  engine.pause();
  std::mt19937 rng(9);
  std::vector<Request> requests;
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (int i = 0; i < 10; ++i) {
    Request r{random_prompt(rng, 4 + 2 * i, 512), {}};
    r.params.temperature = 0;
    r.params.max_tokens = 6;
    r.params.ignore_eos = true;
    requests.push_back(r);
    streams.push_back(submit_ok(engine, r));
  }
  RequestOutput out;
  EXPECT_FALSE(streams[0]->next(&out, 200ms)) << "a paused engine emitted an event";
  EXPECT_EQ(engine.stats().steps_total, 0u);
  engine.resume();
  for (size_t i = 0; i < streams.size(); ++i) {
    const Collected got = collect(*streams[i]);
    ASSERT_EQ(got.finish_events, 1);
    EXPECT_EQ(*got.last.finish, FinishReason::kLength);
    EXPECT_EQ(got.tokens, naive_generate(*model.weights, requests[i].prompt_ids, 6, 0.0f, 0, {}));
  }
  EXPECT_EQ(engine.stats().max_seqs_in_step, 10);
  expect_settled(engine);
}

TEST_F(EngineTest, ShutdownOfAPausedEngineResumesAndDrainsInsteadOfAborting) {
  Engine engine(random_model(small_config(), 21), small_tokenizer(), config());
  engine.pause();
  std::mt19937 rng(10);
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (int i = 0; i < 3; ++i) {
    Request r{random_prompt(rng, 8, 512), {}};
    r.params.temperature = 0;
    r.params.max_tokens = 5;
    r.params.ignore_eos = true;
    streams.push_back(submit_ok(engine, r));
  }
  EXPECT_EQ(engine.shutdown(120s), 0) << "requests were aborted instead of drained";
  for (auto& s : streams) {
    const Collected got = collect(*s);
    ASSERT_EQ(got.finish_events, 1);
    EXPECT_EQ(*got.last.finish, FinishReason::kLength);
    EXPECT_EQ(got.last.completion_tokens, 5);
  }
}

TEST_F(EngineTest, StopStringSpanningTokensCutsTheTextAndStopsTheRequest) {
  Engine engine(random_model(small_config(), 21), small_tokenizer(), config());
  std::mt19937 rng(6);
  Request r{random_prompt(rng, 12, 512), {}};
  r.params.temperature = 0;
  r.params.max_tokens = 40;
  r.params.ignore_eos = true;
  Collected full = collect(*submit_ok(engine, r));
  ASSERT_GE(full.tokens.size(), 10u);
  // A stop string made of the last bytes of token 4 and the first bytes of token 5, so it can
  // only be seen across the token boundary.
  const Tokenizer& tok = *small_tokenizer();
  std::string before = tok.decode({full.tokens.begin(), full.tokens.begin() + 5});
  std::string t4 = tok.token_bytes(full.tokens[4]), t5 = tok.token_bytes(full.tokens[5]);
  ASSERT_FALSE(t4.empty());
  ASSERT_FALSE(t5.empty());
  std::string stop = t4.substr(t4.size() - 1) + t5.substr(0, 1);
  size_t at = full.text.find(stop);
  ASSERT_NE(at, std::string::npos);
  r.params.stop = {stop};
  Collected cut = collect(*submit_ok(engine, r));
  EXPECT_EQ(*cut.last.finish, FinishReason::kStop);
  EXPECT_EQ(cut.last.finish_detail, stop);
  EXPECT_EQ(cut.text, full.text.substr(0, at));
  EXPECT_LE(at, before.size());
  expect_settled(engine);
}

TEST_F(EngineTest, CancelEndsWithOneAbortEventAndFreesBlocks) {
  Engine engine(random_model(small_config(), 21), small_tokenizer(), config());
  std::mt19937 rng(3);
  Request r{random_prompt(rng, 30, 512), {}};
  r.params.max_tokens = 900;
  r.params.ignore_eos = true;
  auto stream = submit_ok(engine, r);
  RequestOutput ev;
  ASSERT_TRUE(stream->next(&ev, 30s));  // running
  stream->cancel();
  Collected c = collect(*stream);
  EXPECT_EQ(c.finish_events, 1);
  EXPECT_EQ(*c.last.finish, FinishReason::kAbort);
  EXPECT_LT(c.last.completion_tokens, 900);
  expect_settled(engine);
}

TEST_F(EngineTest, DroppingTheStreamCancelsTheRequest) {
  Engine engine(random_model(small_config(), 21), small_tokenizer(), config());
  std::mt19937 rng(4);
  Request r{random_prompt(rng, 30, 512), {}};
  r.params.max_tokens = 900;
  r.params.ignore_eos = true;
  {
    auto stream = submit_ok(engine, r);
    RequestOutput ev;
    ASSERT_TRUE(stream->next(&ev, 30s));
  }
  expect_settled(engine);
  EXPECT_GE(engine.stats().requests_aborted_total, 1u);
}

TEST_F(EngineTest, RejectsBadRequestsWithClearMessages) {
  EngineConfig c = config();
  c.max_model_len = 100;
  Engine engine(random_model(small_config(), 21), small_tokenizer(), c);
  Request too_long{std::vector<int32_t>(90, 5), {}};
  too_long.params.max_tokens = 20;
  auto res = engine.submit(too_long);
  ASSERT_TRUE(std::holds_alternative<SubmitError>(res));
  const auto& err = std::get<SubmitError>(res);
  EXPECT_EQ(err.kind, SubmitError::Kind::kInvalid);
  EXPECT_NE(err.message.find("100"), std::string::npos) << err.message;
  EXPECT_NE(err.message.find("110"), std::string::npos) << err.message;

  Request empty{{}, {}};
  EXPECT_TRUE(std::holds_alternative<SubmitError>(engine.submit(empty)));
  Request bad_id{{5, 99999}, {}};
  EXPECT_TRUE(std::holds_alternative<SubmitError>(engine.submit(bad_id)));
  Request bad_temp{{5, 6}, {}};
  bad_temp.params.temperature = -1;
  auto r2 = engine.submit(bad_temp);
  ASSERT_TRUE(std::holds_alternative<SubmitError>(r2));
  EXPECT_EQ(std::get<SubmitError>(r2).param, "temperature");
}

TEST_F(EngineTest, QueueLimitAnswersQueueFullAndRecovers) {
  EngineConfig c = config();
  c.max_num_seqs = 1;
  c.max_queued_requests = 2;
  Engine engine(random_model(small_config(), 21), small_tokenizer(), c);
  std::vector<std::unique_ptr<RequestStream>> held;
  int full = 0;
  for (int i = 0; i < 6; ++i) {
    Request r{{5, 6, 7}, {}};
    r.params.max_tokens = 200;
    r.params.ignore_eos = true;
    auto res = engine.submit(r);
    if (auto* err = std::get_if<SubmitError>(&res)) {
      EXPECT_EQ(err->kind, SubmitError::Kind::kQueueFull);
      ++full;
    } else {
      held.push_back(std::move(std::get<std::unique_ptr<RequestStream>>(res)));
    }
  }
  EXPECT_EQ(full, 3);  // 1 running + 2 queued accepted
  held.clear();        // cancels them
  expect_settled(engine);
  Request r{{5, 6, 7}, {}};
  r.params.max_tokens = 3;
  EXPECT_EQ(collect(*submit_ok(engine, r)).finish_events, 1);
}

TEST_F(EngineTest, ManyRequestsUnderPreemptionAllFinishExactlyOnce) {
  EngineConfig c = config();
  c.num_blocks = 12;
  c.block_size = 8;
  c.max_num_seqs = 16;
  Engine engine(random_model(small_config(), 21), small_tokenizer(), c);
  std::mt19937 rng(5);
  std::vector<std::unique_ptr<RequestStream>> streams;
  std::vector<int> want;
  engine.pause();  // all 24 compete for 12 blocks from the first step, however slow this thread
  for (int i = 0; i < 24; ++i) {
    Request r{random_prompt(rng, 4 + i % 13, 512), {}};
    r.params.max_tokens = 8 + i % 17;
    r.params.ignore_eos = true;
    r.params.temperature = (i % 2) ? 0.0f : 0.8f;
    want.push_back(r.params.max_tokens);
    streams.push_back(submit_ok(engine, r));
  }
  engine.resume();
  for (size_t i = 0; i < streams.size(); ++i) {
    Collected c2 = collect(*streams[i]);
    EXPECT_EQ(c2.finish_events, 1);
    EXPECT_EQ(static_cast<int>(c2.tokens.size()), want[i]);
  }
  EXPECT_GT(engine.stats().preemptions_total, 0u);
  expect_settled(engine);
}

TEST_F(EngineTest, ShutdownAbortsWhatIsLeft) {
  auto engine =
      std::make_unique<Engine>(random_model(small_config(), 21), small_tokenizer(), config());
  Request r{{5, 6, 7}, {}};
  r.params.max_tokens = 1000;
  r.params.ignore_eos = true;
  auto stream = submit_ok(*engine, r);
  EXPECT_EQ(engine->shutdown(0ms), 1);  // the one it cut
  Collected c = collect(*stream);
  EXPECT_EQ(c.finish_events, 1);
  EXPECT_EQ(*c.last.finish, FinishReason::kAbort);
  EXPECT_TRUE(std::holds_alternative<SubmitError>(engine->submit(r)));
}

TEST_F(EngineTest, ShutdownWithTimeToSpareCutsNothing) {
  auto engine =
      std::make_unique<Engine>(random_model(small_config(), 21), small_tokenizer(), config());
  Request r{{5, 6, 7}, {}};
  r.params.max_tokens = 4;
  r.params.ignore_eos = true;
  auto stream = submit_ok(*engine, r);
  EXPECT_EQ(engine->shutdown(30s), 0);  // returns once the request is done, long before 30 s
  Collected c = collect(*stream);
  EXPECT_EQ(c.finish_events, 1);
  EXPECT_EQ(*c.last.finish, FinishReason::kLength);
}

}  // namespace
}  // namespace ps
