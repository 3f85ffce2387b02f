// Prompt logprobs (issue #36): a prompt scored in the packed forward gives each token the
// logprob (and top alternatives) greedy generation gave it one step at a time; the same across
// prefill chunk sizes, beside other requests, and with the prompt already in the prefix cache;
// max_tokens 0 scores without generating.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/test_model.h"

namespace ps {
namespace {

using testing_util::expect_settled;
using testing_util::random_prompt;
using testing_util::small_config;
using testing_util::small_tokenizer;
using testing_util::submit_ok;
using namespace std::chrono_literals;

struct Outcome {
  std::vector<int32_t> tokens;
  std::vector<TokenLogprob> logprobs;
  std::vector<TokenLogprob> prompt_logprobs;
  int events = 0;
  int prompt_logprob_events = 0;  // events that carried prompt logprobs
  RequestOutput last;
};

Outcome run(RequestStream& stream) {
  Outcome r;
  RequestOutput ev;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!stream.finished() && std::chrono::steady_clock::now() < deadline) {
    if (!stream.next(&ev, 100ms)) continue;
    ++r.events;
    r.tokens.insert(r.tokens.end(), ev.token_ids.begin(), ev.token_ids.end());
    r.logprobs.insert(r.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
    if (!ev.prompt_logprobs.empty()) {
      ++r.prompt_logprob_events;
      r.prompt_logprobs = ev.prompt_logprobs;
    }
    if (ev.finish) r.last = ev;
  }
  return r;
}

EngineConfig config(int32_t max_batched_tokens) {
  EngineConfig c;
  c.num_blocks = 256;
  c.block_size = 16;
  c.max_num_seqs = 32;
  c.max_batched_tokens = max_batched_tokens;
  c.check_integrity_every_step = true;
  c.runner.linear_mode = LinearMode::packed;
  return c;
}

Request greedy(std::vector<int32_t> prompt, int32_t max_tokens, int32_t top) {
  Request r{std::move(prompt), {}};
  r.params.temperature = 0;
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;
  r.params.logprobs = top;
  return r;
}

Request scoring(std::vector<int32_t> prompt, int32_t top) {
  Request r = greedy(std::move(prompt), 0, -1);
  r.params.prompt_logprobs = top;
  return r;
}

// The generated tokens' logprobs, as the tail of the scored prompt's.
void expect_same_scores(const Outcome& generated, const Outcome& scored, size_t prompt_len) {
  const size_t n = generated.tokens.size();
  ASSERT_EQ(scored.prompt_logprobs.size(), prompt_len + n - 1) << "one per token after the first";
  for (size_t i = 0; i < n; ++i) {
    const TokenLogprob& want = generated.logprobs[i];
    const TokenLogprob& got = scored.prompt_logprobs[prompt_len - 1 + i];
    EXPECT_EQ(got.token_id, generated.tokens[i]) << "token " << i;
    // The prompt rows run in a prefill's matrix products, a decode in one row's: the same
    // arithmetic up to float rounding.
    EXPECT_NEAR(got.logprob, want.logprob, 1e-3f) << "token " << i;
    EXPECT_EQ(got.rank, 1) << "a greedy token ranks first";
    ASSERT_EQ(got.top.size(), want.top.size());
    for (size_t k = 0; k < want.top.size(); ++k) {
      EXPECT_EQ(got.top[k].first, want.top[k].first) << "token " << i << " alternative " << k;
      EXPECT_NEAR(got.top[k].second, want.top[k].second, 1e-3f);
    }
  }
}

TEST(PromptLogprobs, EqualGreedyGenerationsLogprobsAtEveryChunkSize) {
  std::mt19937 rng(5);
  const std::vector<int32_t> prompt = random_prompt(rng, 9, 512);
  Outcome generated;
  {
    Engine engine(random_model(small_config(), 21), small_tokenizer(), config(2048));
    generated = run(*submit_ok(engine, greedy(prompt, 12, 3)));
  }
  ASSERT_EQ(generated.tokens.size(), 12u);
  std::vector<int32_t> whole = prompt;
  whole.insert(whole.end(), generated.tokens.begin(), generated.tokens.end());
  // 2048: one chunk; 8 and 5: the prompt spans chunks, each chunk's last row scoring the next
  // chunk's first token.
  for (int32_t chunk : {2048, 8, 5}) {
    Engine engine(random_model(small_config(), 21), small_tokenizer(), config(chunk));
    Outcome scored = run(*submit_ok(engine, scoring(whole, 3)));
    SCOPED_TRACE("max_batched_tokens " + std::to_string(chunk));
    expect_same_scores(generated, scored, prompt.size());
    EXPECT_EQ(scored.events, 1) << "max_tokens 0: one event, the finish";
    EXPECT_EQ(*scored.last.finish, FinishReason::kLength);
    EXPECT_TRUE(scored.tokens.empty());
    EXPECT_EQ(scored.last.completion_tokens, 0);
    EXPECT_EQ(scored.last.prompt_tokens, static_cast<int32_t>(whole.size()));
    expect_settled(engine);
  }
}

TEST(PromptLogprobs, BesideOtherRequestsAndWithTheirPrefixCached) {
  std::mt19937 rng(6);
  const std::vector<int32_t> prompt = random_prompt(rng, 40, 512);
  Engine engine(random_model(small_config(), 21), small_tokenizer(), config(16));
  // Alone first: what the others must still get, and the prompt's blocks go into the cache.
  const Outcome alone = run(*submit_ok(engine, greedy(prompt, 10, 2)));
  std::vector<int32_t> whole = prompt;
  whole.insert(whole.end(), alone.tokens.begin(), alone.tokens.end());
  // Then the scoring request (its prompt's prefix is cached) among four generating ones.
  std::vector<std::unique_ptr<RequestStream>> others;
  for (int i = 0; i < 2; ++i) others.push_back(submit_ok(engine, greedy(prompt, 10, 2)));
  auto scoring_stream = submit_ok(engine, scoring(whole, 2));
  for (int i = 0; i < 2; ++i) others.push_back(submit_ok(engine, greedy(prompt, 10, 2)));
  const Outcome scored = run(*scoring_stream);
  expect_same_scores(alone, scored, prompt.size());
  EXPECT_EQ(scored.last.cached_tokens, 0) << "a scored prompt computes every row";
  for (auto& s : others) {
    const Outcome r = run(*s);
    EXPECT_EQ(r.tokens, alone.tokens) << "scoring beside them changes nothing";
    EXPECT_GT(r.last.cached_tokens, 0) << "the others still hit the prefix cache";
  }
  expect_settled(engine);
}

TEST(PromptLogprobs, ComeOnceWithTheFirstTokenWhenGenerating) {
  std::mt19937 rng(7);
  const std::vector<int32_t> prompt = random_prompt(rng, 20, 512);
  Engine engine(random_model(small_config(), 21), small_tokenizer(), config(2048));
  Request r = greedy(prompt, 5, 0);
  r.params.prompt_logprobs = 0;
  const Outcome got = run(*submit_ok(engine, r));
  EXPECT_EQ(got.tokens.size(), 5u);
  EXPECT_EQ(got.prompt_logprob_events, 1);
  ASSERT_EQ(got.prompt_logprobs.size(), prompt.size() - 1);
  for (size_t i = 0; i < got.prompt_logprobs.size(); ++i) {
    EXPECT_EQ(got.prompt_logprobs[i].token_id, prompt[i + 1]);
    EXPECT_TRUE(std::isfinite(got.prompt_logprobs[i].logprob));
    EXPECT_LE(got.prompt_logprobs[i].logprob, 0.0f);
    EXPECT_GE(got.prompt_logprobs[i].rank, 1);
    EXPECT_TRUE(got.prompt_logprobs[i].top.empty()) << "prompt_logprobs 0: the token alone";
  }
  // A one-token prompt has nothing to score.
  Request one = scoring({prompt[0]}, 0);
  const Outcome single = run(*submit_ok(engine, one));
  EXPECT_TRUE(single.prompt_logprobs.empty());
  EXPECT_EQ(*single.last.finish, FinishReason::kLength);
  expect_settled(engine);
}

}  // namespace
}  // namespace ps
