// RoPE-scaled models through the whole engine (issue #17): a llama3-scaled random model
// generates, batched, past its original context exactly what the naive oracle generates alone,
// and a linear-scaled one is allowed the stretched context (vLLM's rule) and no more.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "engine/engine.h"
#include "model/model_weights.h"
#include "reference/naive_generate.h"
#include "tests/engine/test_model.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {
namespace {

using testing_util::random_prompt;
using testing_util::small_config;
using testing_util::small_tokenizer;
using namespace std::chrono_literals;

EngineConfig engine_config() {
  EngineConfig c;
  c.num_blocks = 128;
  c.block_size = 16;
  c.max_num_seqs = 8;
  c.max_batched_tokens = 96;  // long prompts prefill in chunks, mixed with decodes
  c.check_integrity_every_step = true;
  c.runner.linear_mode = LinearMode::packed;
  c.runner.tuning_cache = "off";
  return c;
}

// Llama 3.1's scheme shrunk: original context 64, stated (already extended) context 256.
ModelConfig llama3_config() {
  ModelConfig c = small_config("llama");
  c.max_position_embeddings = 256;
  c.rope_theta = 10000.0f;
  c.rope_scaling.type = RopeType::llama3;
  c.rope_scaling.factor = 4.0;
  c.rope_scaling.low_freq_factor = 1.0;
  c.rope_scaling.high_freq_factor = 4.0;
  c.rope_scaling.original_max_position_embeddings = 64;
  c.validate("llama3 test config");
  return c;
}

// Seeded random weights made livelier (the checkpoint default of normal(0, 0.02) leaves logits
// near 0 and greedy decoding repeating one token, where the comparison with the oracle would
// prove little, and would not even notice the RoPE scaling).
LoadedModel lively_model(const ModelConfig& c, uint64_t seed) {
  const LoadedModel base = random_model(c, seed);
  auto ps_weights = std::make_shared<ModelWeights>(*base.weights);
  // Zero-copy torch views: the in-place ops below change the weights' buffers.
  TorchWeights torch_view = to_torch(*ps_weights);
  TorchWeights* w = &torch_view;
  w->embed_tokens.mul_(5.0);
  if (w->lm_head.defined() && !w->lm_head.is_same(w->embed_tokens)) w->lm_head.mul_(5.0);
  for (TorchLayerWeights& l : w->layers) {
    for (at::Tensor* t :
         {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj}) {
      t->mul_(5.0);
    }
  }
  return LoadedModel{c, ps_weights};
}

std::vector<int32_t> run_to_end(RequestStream& stream, int* finishes) {
  std::vector<int32_t> tokens;
  RequestOutput ev;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!stream.finished() && std::chrono::steady_clock::now() < deadline) {
    if (!stream.next(&ev, 100ms)) continue;
    tokens.insert(tokens.end(), ev.token_ids.begin(), ev.token_ids.end());
    if (ev.finish) ++*finishes;
  }
  return tokens;
}

TEST(RopeScalingEngine, Llama3ModelGeneratesAsTheOracleBatchedPastTheOriginalContext) {
  const LoadedModel model = lively_model(llama3_config(), 31);
  Engine engine(model, small_tokenizer(), engine_config());
  EXPECT_EQ(engine.max_model_len(), 256);
  std::mt19937 rng(5);
  std::vector<Request> requests;
  for (int len : {40, 70, 130, 200}) {
    Request r{random_prompt(rng, len, model.config.vocab_size), {}};
    r.params.temperature = 0;
    r.params.max_tokens = 16;
    r.params.ignore_eos = true;
    requests.push_back(r);
  }
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (const Request& r : requests) {  // all in flight at once
    SubmitResult res = engine.submit(r);
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<RequestStream>>(res));
    streams.push_back(std::move(std::get<std::unique_ptr<RequestStream>>(res)));
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    int finishes = 0;
    const std::vector<int32_t> got = run_to_end(*streams[i], &finishes);
    EXPECT_EQ(finishes, 1);
    const std::vector<int32_t> want =
        naive_generate(*model.weights, requests[i].prompt_ids, 16, 0.0f, 0, {});
    EXPECT_EQ(got, want) << "prompt of " << requests[i].prompt_ids.size() << " tokens";
  }
  // The oracle's greedy path depends on the scaling: plain RoPE generates something else for
  // the longest prompt (so the comparison above can fail).
  ModelWeights plain = *model.weights;
  plain.config.rope_scaling = RopeScaling{};
  EXPECT_NE(naive_generate(plain, requests.back().prompt_ids, 16, 0.0f, 0, {}),
            naive_generate(*model.weights, requests.back().prompt_ids, 16, 0.0f, 0, {}));
}

TEST(RopeScalingEngine, LinearScalingStretchesTheAllowedContextAndNoFurther) {
  ModelConfig c = small_config("llama");
  c.max_position_embeddings = 64;
  c.rope_scaling.type = RopeType::linear;
  c.rope_scaling.factor = 4.0;
  const LoadedModel model = lively_model(c, 8);
  Engine engine(model, small_tokenizer(), engine_config());
  EXPECT_EQ(engine.max_model_len(), 256);  // 64 * 4, as vLLM derives it

  std::mt19937 rng(9);
  Request fits{random_prompt(rng, 200, c.vocab_size), {}};
  fits.params.temperature = 0;
  fits.params.max_tokens = 8;
  fits.params.ignore_eos = true;
  SubmitResult res = engine.submit(fits);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<RequestStream>>(res));
  int finishes = 0;
  EXPECT_EQ(run_to_end(*std::get<std::unique_ptr<RequestStream>>(res), &finishes),
            naive_generate(*model.weights, fits.prompt_ids, 8, 0.0f, 0, {}));
  EXPECT_EQ(finishes, 1);

  Request too_long{random_prompt(rng, 250, c.vocab_size), {}};
  too_long.params.max_tokens = 10;
  const SubmitResult rejected = engine.submit(too_long);
  ASSERT_TRUE(std::holds_alternative<SubmitError>(rejected));
  const std::string& msg = std::get<SubmitError>(rejected).message;
  EXPECT_NE(msg.find("256"), std::string::npos) << msg;
  EXPECT_NE(msg.find("260"), std::string::npos) << msg;
}

}  // namespace
}  // namespace ps
