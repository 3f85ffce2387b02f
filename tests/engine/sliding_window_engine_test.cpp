// Sliding-window KV release through the whole engine (issue #34): a Gemma-3-style model (a
// sliding layer, window 12, then a global one) generates batched, with chunked prefill and
// prefix hits, exactly what the naive oracle generates alone, with its sliding layers' K/V in a
// pool of their own that gives blocks back as the window passes; the pools' integrity is
// checked after every step (EngineConfig::check_integrity_every_step).
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "engine/engine.h"
#include "reference/naive_generate.h"
#include "tests/engine/test_model.h"

namespace ps {
namespace {

using testing_util::random_prompt;
using testing_util::small_config;
using testing_util::small_tokenizer;
using namespace std::chrono_literals;

EngineConfig engine_config(bool hybrid) {
  EngineConfig c;
  c.num_blocks = 256;
  c.block_size = 4;
  c.max_num_seqs = 8;
  c.max_batched_tokens = 48;  // the longer prompts prefill in chunks, mixed with decodes
  c.check_integrity_every_step = true;
  c.hybrid_kv_cache = hybrid;
  c.runner.linear_mode = LinearMode::packed;
  c.runner.tuning_cache = "off";
  return c;
}

struct Wave {
  std::vector<std::vector<int32_t>> outputs;
  EngineStats stats;
};

// Submits every prompt at once (held while paused, so they share steps), then collects.
Wave generate(Engine& engine, const std::vector<std::vector<int32_t>>& prompts, int new_tokens) {
  engine.pause();
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (const auto& p : prompts) {
    Request r{p, {}};
    r.params.temperature = 0;
    r.params.max_tokens = new_tokens;
    r.params.ignore_eos = true;
    SubmitResult res = engine.submit(r);
    EXPECT_TRUE(std::holds_alternative<std::unique_ptr<RequestStream>>(res));
    if (!std::holds_alternative<std::unique_ptr<RequestStream>>(res)) continue;
    streams.push_back(std::move(std::get<std::unique_ptr<RequestStream>>(res)));
  }
  engine.resume();
  Wave w;
  for (auto& s : streams) {
    std::vector<int32_t> tokens;
    RequestOutput ev;
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (!s->finished() && std::chrono::steady_clock::now() < deadline) {
      if (!s->next(&ev, 100ms)) continue;
      tokens.insert(tokens.end(), ev.token_ids.begin(), ev.token_ids.end());
      EXPECT_NE(ev.finish_detail.find("error"), 0u) << ev.finish_detail;
    }
    w.outputs.push_back(tokens);
  }
  // The finish events go out before the step that sent them frees the blocks and publishes its
  // stats: wait for the engine to say it is idle (bounded; the checks that follow say what held).
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  do {
    w.stats = engine.stats();
    if (w.stats.running == 0 && w.stats.kv_blocks_active == 0) break;
    std::this_thread::sleep_for(5ms);
  } while (std::chrono::steady_clock::now() < deadline);
  return w;
}

class SlidingWindowEngine : public ::testing::TestWithParam<bool> {};

TEST_P(SlidingWindowEngine, GeneratesAsTheOracleWithAndWithoutTheSlidingPool) {
  const bool hybrid = GetParam();
  const ModelConfig c = small_config("gemma3_text");
  const LoadedModel model = random_model(c, 21);
  Engine engine(model, small_tokenizer(), engine_config(hybrid));
  std::mt19937 rng(3);
  std::vector<std::vector<int32_t>> prompts;
  for (int len : {5, 30, 61, 90, 17}) prompts.push_back(random_prompt(rng, len, c.vocab_size));
  // A second wave that shares the longest prompt's first 64 tokens (16 full blocks).
  std::vector<std::vector<int32_t>> later;
  for (int tail : {3, 11}) {
    std::vector<int32_t> p(prompts[3].begin(), prompts[3].begin() + 64);
    const auto t = random_prompt(rng, tail, c.vocab_size);
    p.insert(p.end(), t.begin(), t.end());
    later.push_back(p);
  }
  const int new_tokens = 20;
  const Wave first = generate(engine, prompts, new_tokens);
  const Wave second = generate(engine, later, new_tokens);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(first.outputs[i], naive_generate(*model.weights, prompts[i], new_tokens, 0.0f, 0, {}))
        << "prompt " << i;
  }
  for (size_t i = 0; i < later.size(); ++i) {
    EXPECT_EQ(second.outputs[i], naive_generate(*model.weights, later[i], new_tokens, 0.0f, 0, {}))
        << "later prompt " << i;
  }
  const EngineStats& s = second.stats;
  EXPECT_TRUE(s.kv_integrity_ok);
  // The second wave found the shared prefix in both pools (released sliding blocks stay cached).
  EXPECT_GE(s.prefix_cache_hits, 2u * 64u);
  EXPECT_EQ(s.kv_blocks_active, 0);
  if (hybrid) {
    EXPECT_GT(s.kv_sliding_blocks_total, 0);
    EXPECT_EQ(s.kv_sliding_blocks_active, 0);
    EXPECT_EQ(s.kv_sliding_blocks_free + s.kv_sliding_blocks_cached, s.kv_sliding_blocks_total);
    // The global layer keeps every block, the sliding one about a window's worth.
    EXPECT_LT(s.kv_layer_blocks_held_sum, s.kv_layer_blocks_unsplit_sum);
  } else {
    EXPECT_EQ(s.kv_sliding_blocks_total, 0);
    EXPECT_EQ(s.kv_layer_blocks_held_sum, s.kv_layer_blocks_unsplit_sum);
  }
}

INSTANTIATE_TEST_SUITE_P(Pools, SlidingWindowEngine, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Split" : "OnePool"; });

}  // namespace
}  // namespace ps
