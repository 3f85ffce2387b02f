// Qwen3.5-style hybrid models through the whole engine (issue #35): Gated DeltaNet layers whose
// recurrent state lives in a state slot per running sequence, beside gated full attention whose
// K/V lives in the paged blocks. Batched generation with chunked prefill and preemption equals the
// naive oracle alone; every finished, cancelled or preempted sequence gives its slot back; a KV
// budget too small for --max-num-seqs states lowers the batch instead of failing. Integrity (state
// slots in use + free = pool, one per running sequence) is checked after every step.
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

EngineConfig engine_config() {
  EngineConfig c;
  c.num_blocks = 256;
  c.block_size = 4;
  c.max_num_seqs = 6;
  c.max_batched_tokens = 40;  // the longer prompts prefill in chunks, mixed with decodes
  c.check_integrity_every_step = true;
  c.runner.linear_mode = LinearMode::packed;
  c.runner.tuning_cache = "off";
  return c;
}

std::unique_ptr<RequestStream> submit(Engine& engine, const std::vector<int32_t>& prompt,
                                      int new_tokens) {
  Request r{prompt, {}};
  r.params.temperature = 0;
  r.params.max_tokens = new_tokens;
  r.params.ignore_eos = true;
  SubmitResult res = engine.submit(r);
  EXPECT_TRUE(std::holds_alternative<std::unique_ptr<RequestStream>>(res));
  if (!std::holds_alternative<std::unique_ptr<RequestStream>>(res)) return nullptr;
  return std::move(std::get<std::unique_ptr<RequestStream>>(res));
}

std::vector<int32_t> collect(RequestStream& s) {
  std::vector<int32_t> tokens;
  RequestOutput ev;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!s.finished() && std::chrono::steady_clock::now() < deadline) {
    if (!s.next(&ev, 100ms)) continue;
    tokens.insert(tokens.end(), ev.token_ids.begin(), ev.token_ids.end());
    EXPECT_NE(ev.finish_detail.find("error"), 0u) << ev.finish_detail;
  }
  return tokens;
}

// The finish events go out before the step that sent them frees the slots and publishes its
// stats: waits (bounded, on the stats as an event) for the engine to say it is idle.
EngineStats idle_stats(Engine& engine) {
  EngineStats s;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  do {
    s = engine.stats();
    if (s.running == 0 && s.waiting == 0 && s.state_slots_in_use == 0) break;
    std::this_thread::sleep_for(5ms);
  } while (std::chrono::steady_clock::now() < deadline);
  return s;
}

std::vector<std::vector<int32_t>> generate_all(Engine& engine,
                                               const std::vector<std::vector<int32_t>>& prompts,
                                               int new_tokens) {
  engine.pause();  // held until all are in, so they share steps
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (const auto& p : prompts) streams.push_back(submit(engine, p, new_tokens));
  engine.resume();
  std::vector<std::vector<int32_t>> out;
  for (auto& s : streams) out.push_back(s ? collect(*s) : std::vector<int32_t>{});
  return out;
}

TEST(HybridEngine, GeneratesAsTheOracleWithChunkedPrefillAndPreemption) {
  const ModelConfig c = small_config("qwen3_5_text");
  const LoadedModel model = random_model(c, 31);
  EngineConfig ec = engine_config();
  ec.num_blocks = 30;  // 120 token slots for 6 sequences that grow to ~50-110 tokens: preemption
  Engine engine(model, small_tokenizer(), ec);
  std::mt19937 rng(5);
  std::vector<std::vector<int32_t>> prompts;
  for (int len : {3, 45, 70, 12, 33, 8}) prompts.push_back(random_prompt(rng, len, c.vocab_size));
  const int new_tokens = 24;
  const auto outputs = generate_all(engine, prompts, new_tokens);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(outputs[i], naive_generate(*model.weights, prompts[i], new_tokens, 0.0f, 0, {}))
        << "prompt " << i;
  }
  const EngineStats s = idle_stats(engine);
  EXPECT_TRUE(s.kv_integrity_ok);
  EXPECT_GT(s.preemptions_total, 0u) << "the pool was meant to force preemption";
  EXPECT_EQ(s.state_slots_total, 6);
  EXPECT_EQ(s.state_slots_in_use, 0);
  EXPECT_EQ(s.kv_blocks_active, 0);
}

TEST(HybridEngine, CancelledSequencesGiveTheirSlotsBack) {
  const ModelConfig c = small_config("qwen3_5_text");
  const LoadedModel model = random_model(c, 32);
  Engine engine(model, small_tokenizer(), engine_config());
  std::mt19937 rng(6);
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (int i = 0; i < 6; ++i)
    streams.push_back(submit(engine, random_prompt(rng, 20, c.vocab_size), 400));
  // Each has started streaming: its slot is in use. Then half are cancelled, half dropped.
  for (auto& s : streams) {
    RequestOutput ev;
    while (s && !s->finished() && !s->next(&ev, 100ms)) {
    }
  }
  EXPECT_GT(engine.stats().state_slots_in_use, 0);
  for (size_t i = 0; i < streams.size(); ++i) {
    if (i % 2 == 0) {
      streams[i]->cancel();
    } else {
      streams[i].reset();  // a reader that goes away cancels its request
    }
  }
  const EngineStats s = idle_stats(engine);
  EXPECT_EQ(s.state_slots_in_use, 0);
  EXPECT_EQ(s.state_slots_total, 6);
  EXPECT_TRUE(s.kv_integrity_ok);
  // The freed slots serve new sequences from zero states: a fresh request equals the oracle.
  const auto prompt = random_prompt(rng, 15, c.vocab_size);
  const auto out = generate_all(engine, {prompt}, 10);
  EXPECT_EQ(out[0], naive_generate(*model.weights, prompt, 10, 0.0f, 0, {}));
}

TEST(HybridEngine, ABudgetForFewStatesLowersTheBatch) {
  const ModelConfig c = small_config("qwen3_5_text");
  const LoadedModel model = random_model(c, 33);
  EngineConfig ec = engine_config();
  ec.num_blocks = 0;
  // Half of 40000 bytes holds 2 states of 8832 bytes (2 layers x 1104 floats); the rest is KV.
  ec.kv_cache_memory = 40000;
  Engine engine(model, small_tokenizer(), ec);
  EXPECT_EQ(engine.stats().state_slots_total, 2);
  std::mt19937 rng(7);
  std::vector<std::vector<int32_t>> prompts;
  for (int len : {4, 9, 14, 6, 11}) prompts.push_back(random_prompt(rng, len, c.vocab_size));
  const auto outputs = generate_all(engine, prompts, 8);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(outputs[i], naive_generate(*model.weights, prompts[i], 8, 0.0f, 0, {})) << i;
  }
  const EngineStats s = idle_stats(engine);
  EXPECT_EQ(s.state_slots_in_use, 0);
  EXPECT_TRUE(s.kv_integrity_ok);
  // Half the budget cannot hold one state: start-up fails naming the flag.
  ec.kv_cache_memory = 16000;
  try {
    Engine small(model, small_tokenizer(), ec);
    ADD_FAILURE() << "an engine started without room for one recurrent state";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-cache-memory"), std::string::npos) << e.what();
  }
}

// A second wave sharing the first prompt's first 32 tokens restores the state snapshot taken at
// token 32 (every 8 tokens here) and computes only its tail; without prefix caching it takes no
// snapshots and reuses nothing. Either way the outputs are the oracle's.
TEST(HybridEngine, SharedPrefixRestoresAStateSnapshot) {
  const ModelConfig c = small_config("qwen3_5_text");
  const LoadedModel model = random_model(c, 35);
  std::mt19937 rng(8);
  const auto first = random_prompt(rng, 37, c.vocab_size);
  std::vector<std::vector<int32_t>> later;
  for (int tail : {2, 9}) {
    std::vector<int32_t> p(first.begin(), first.begin() + 32);
    const auto t = random_prompt(rng, tail, c.vocab_size);
    p.insert(p.end(), t.begin(), t.end());
    later.push_back(p);
  }
  for (const bool caching : {true, false}) {
    EngineConfig ec = engine_config();
    ec.state_snapshot_interval = 8;
    ec.enable_prefix_caching = caching;
    Engine engine(model, small_tokenizer(), ec);
    EXPECT_EQ(generate_all(engine, {first}, 6)[0],
              naive_generate(*model.weights, first, 6, 0.0f, 0, {}));
    const auto outputs = generate_all(engine, later, 6);
    for (size_t i = 0; i < later.size(); ++i) {
      EXPECT_EQ(outputs[i], naive_generate(*model.weights, later[i], 6, 0.0f, 0, {})) << i;
    }
    const EngineStats s = idle_stats(engine);
    EXPECT_TRUE(s.kv_integrity_ok);
    if (caching) {
      EXPECT_EQ(s.state_snapshots_total, 16);  // --num-blocks given: 16 unless asked
      EXPECT_GE(s.state_snapshots_held, 4);    // 8, 16, 24, 32 of the first prompt at least
      EXPECT_GE(s.prefix_cache_hits, 2u * 32u);
    } else {
      EXPECT_EQ(s.state_snapshots_total, 0);
      EXPECT_EQ(s.prefix_cache_hits, 0u);
    }
  }
}

TEST(HybridEngine, SpeculativeDecodingIsRefusedByName) {
  const LoadedModel model = random_model(small_config("qwen3_5_text"), 34);
  EngineConfig ec = engine_config();
  ec.speculative.num_speculative_tokens = 3;
  try {
    Engine engine(model, small_tokenizer(), ec);
    ADD_FAILURE() << "speculation was accepted for a recurrent model";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--speculative ngram"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ps
