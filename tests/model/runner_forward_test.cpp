// The packed, paged forward against the naive oracle (docs/architecture.md §5): every sampled row's logits
// must match naive_logits over the whole sequence, whatever else is in the batch, however the
// prompt was chunked, and across decode steps that feed back argmax tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/random_weights.h"
#include "cpu/model_runner.h"
#include "kernels/kernel_isa.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {
namespace {

constexpr double kTol = 1e-4;

struct Flavour {
  std::string type;
  int32_t heads, kv_heads, head_dim;
  int32_t block_size;
};

void PrintTo(const Flavour& f, std::ostream* os) {
  *os << f.type << " heads " << f.heads << "/" << f.kv_heads << " head_dim " << f.head_dim
      << " block " << f.block_size;
}

ModelConfig config_for(const Flavour& f) {
  ModelConfig c;
  c.set_model_type(f.type);
  c.hidden_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = f.heads;
  c.num_key_value_heads = f.kv_heads;
  c.head_dim = f.head_dim;
  c.intermediate_size = 256;
  c.vocab_size = 500;
  c.max_position_embeddings = 512;
  c.rope_theta = 10000.0f;
  return c;
}

// Random weights scaled so activations and logits are O(1) (the checkpoint default of
// normal(0, 0.02) with unit norms leaves logits near 0, where a 1e-4 check proves little), with
// norm weights and biases away from 1 and 0 so a skipped multiply or add shows.
std::shared_ptr<const ModelWeights> test_weights(const ModelConfig& c, uint64_t seed) {
  auto ps_weights = std::make_shared<ModelWeights>(make_random_weights(c, seed));
  // Zero-copy torch views: the in-place ops below change ps_weights' buffers.
  TorchWeights torch_view = to_torch(*ps_weights);
  TorchWeights* w = &torch_view;
  at::manual_seed(seed);
  auto jitter = [](at::Tensor& t, double around, double spread) {
    if (t.defined()) t.copy_(around + spread * at::randn(t.sizes()));
  };
  const bool tied = w->lm_head.defined() && w->lm_head.data_ptr() == w->embed_tokens.data_ptr();
  w->embed_tokens.mul_(5.0);
  if (w->lm_head.defined() && !tied) w->lm_head.mul_(5.0);
  jitter(w->norm, 1.0, 0.3);
  for (TorchLayerWeights& l : w->layers) {
    for (at::Tensor* t :
         {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj}) {
      t->mul_(5.0);
    }
    for (at::Tensor* t : {&l.input_layernorm, &l.post_attention_layernorm, &l.q_norm, &l.k_norm}) {
      jitter(*t, 1.0, 0.3);
    }
    for (at::Tensor* t : {&l.q_bias, &l.k_bias, &l.v_bias}) jitter(*t, 0.0, 0.5);
  }
  return ps_weights;
}

struct Seq {
  explicit Seq(std::vector<int32_t> t = {}) : tokens(std::move(t)) {}
  std::vector<int32_t> tokens;
  int32_t computed = 0;  // tokens whose K/V is in the cache
  std::vector<int32_t> blocks;
};

// A test's own block allocation (scattered: the free list is shuffled) and plan packing.
class Planner {
 public:
  Planner(int32_t num_blocks, int32_t block_size, uint32_t seed) : block_size_(block_size) {
    free_.resize(num_blocks);
    std::iota(free_.begin(), free_.end(), 0);
    std::shuffle(free_.begin(), free_.end(), std::mt19937(seed));
  }

  // Schedules the next n uncomputed tokens of s; it samples when they reach its last token.
  void add(Seq& s, int32_t n) {
    const int32_t index = plan_.num_seqs();
    plan_.seq_ids.push_back(index);
    if (plan_.query_start.empty()) plan_.query_start.push_back(0);
    for (int32_t pos = s.computed; pos < s.computed + n; ++pos) {
      if (pos / block_size_ >= int32_t(s.blocks.size())) {
        s.blocks.push_back(free_.back());
        free_.pop_back();
      }
      plan_.token_ids.push_back(s.tokens[pos]);
      plan_.positions.push_back(pos);
      plan_.slot_mapping.push_back(s.blocks[pos / block_size_] * block_size_ + pos % block_size_);
    }
    s.computed += n;
    plan_.query_start.push_back(plan_.query_start.back() + n);
    plan_.context_len.push_back(s.computed);
    if (s.computed == int32_t(s.tokens.size())) plan_.sample_indices.push_back(index);
    seqs_.push_back(&s);
  }

  StepPlan take() {
    StepPlan p = std::move(plan_);
    plan_ = StepPlan{};
    for (const Seq* s : seqs_)
      p.max_blocks_per_seq = std::max<int32_t>(p.max_blocks_per_seq, int32_t(s->blocks.size()));
    p.block_tables.assign(seqs_.size() * size_t(p.max_blocks_per_seq), -1);
    for (size_t i = 0; i < seqs_.size(); ++i) {
      std::copy(seqs_[i]->blocks.begin(), seqs_[i]->blocks.end(),
                p.block_tables.begin() + int64_t(i) * p.max_blocks_per_seq);
    }
    seqs_.clear();
    return p;
  }

 private:
  int32_t block_size_;
  std::vector<int32_t> free_;
  StepPlan plan_;
  std::vector<Seq*> seqs_;
};

std::vector<int32_t> random_tokens(int32_t n, int32_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(0, vocab - 1);
  std::vector<int32_t> t(n);
  for (int32_t& x : t) x = d(rng);
  return t;
}

// max |runner row - oracle last row| for the sequence's tokens so far.
double diff_vs_oracle(const ModelWeights& w, const Seq& s, const float* row) {
  const std::vector<float> all = naive_logits(w, s.tokens);
  const int32_t V = w.config.vocab_size;
  const float* last = all.data() + (all.size() - V);
  double worst = 0;
  for (int32_t v = 0; v < V; ++v) worst = std::max(worst, std::abs(double(row[v]) - last[v]));
  return worst;
}

int32_t argmax(const float* row, int32_t n) {
  return int32_t(std::max_element(row, row + n) - row);
}

class RunnerVsOracle : public ::testing::TestWithParam<Flavour> {
 protected:
  void SetUp() override {
    config_ = config_for(GetParam());
    weights_ = test_weights(config_, 7);
  }
  std::unique_ptr<ModelRunner> make_runner() {
    return std::make_unique<ModelRunner>(weights_, KvCacheSpec{kBlocks, GetParam().block_size});
  }
  static constexpr int32_t kBlocks = 256;
  ModelConfig config_;
  std::shared_ptr<const ModelWeights> weights_;
};

TEST_P(RunnerVsOracle, PromptsOfDifferentLengthsInOneStep) {
  const std::vector<int32_t> lengths{1, 5, 17, 33, 60, 2};
  std::vector<Seq> seqs(lengths.size());
  for (size_t i = 0; i < seqs.size(); ++i) {
    seqs[i].tokens = random_tokens(lengths[i], config_.vocab_size, 100 + uint32_t(i));
  }
  auto runner = make_runner();
  Planner planner(kBlocks, GetParam().block_size, 1);
  for (Seq& s : seqs) planner.add(s, int32_t(s.tokens.size()));
  const StepPlan plan = planner.take();
  std::vector<float> logits;
  runner->forward(plan, &logits);
  const int32_t V = config_.vocab_size;
  ASSERT_EQ(logits.size(), seqs.size() * size_t(V));
  double scale = 0;
  for (float x : logits) scale = std::max(scale, double(std::abs(x)));
  EXPECT_GT(scale, 1.0) << "logits too small for the tolerance to mean anything";
  for (size_t i = 0; i < seqs.size(); ++i) {
    EXPECT_LE(diff_vs_oracle(*weights_, seqs[i], logits.data() + i * V), kTol)
        << "prompt of length " << lengths[i];
  }
  // Batch invariance: each prompt alone in a fresh runner gives the same row.
  for (size_t i = 0; i < seqs.size(); ++i) {
    Seq alone(seqs[i].tokens);
    auto solo = make_runner();
    Planner p(kBlocks, GetParam().block_size, 2 + uint32_t(i));
    p.add(alone, int32_t(alone.tokens.size()));
    std::vector<float> one;
    solo->forward(p.take(), &one);
    double worst = 0;
    for (int32_t v = 0; v < V; ++v) {
      worst = std::max(worst, std::abs(double(one[v]) - logits[i * V + v]));
    }
    EXPECT_LE(worst, kTol) << "prompt of length " << lengths[i] << " alone vs batched";
  }
}

TEST_P(RunnerVsOracle, PromptChunkedAcrossSteps) {
  Seq s(random_tokens(61, config_.vocab_size, 5));
  auto runner = make_runner();
  Planner planner(kBlocks, GetParam().block_size, 3);
  std::vector<float> logits;
  for (int32_t chunk : {7, 16, 1, 20}) {
    planner.add(s, chunk);
    runner->forward(planner.take(), &logits);
    EXPECT_TRUE(logits.empty()) << "a non-final chunk samples nothing";
  }
  planner.add(s, 61 - s.computed);
  runner->forward(planner.take(), &logits);
  ASSERT_EQ(logits.size(), size_t(config_.vocab_size));
  EXPECT_LE(diff_vs_oracle(*weights_, s, logits.data()), kTol);
}

TEST_P(RunnerVsOracle, DecodesMixedWithAnotherPrefill) {
  const int32_t V = config_.vocab_size;
  Seq a(random_tokens(23, V, 11)), b(random_tokens(45, V, 12)), c(random_tokens(9, V, 13));
  auto runner = make_runner();
  Planner planner(kBlocks, GetParam().block_size, 4);
  for (int step = 0; step < 8; ++step) {
    std::vector<Seq*> order;
    // Decodes first (DESIGN §3), then prefill chunks of at most 16 tokens.
    for (Seq* s : {&a, &b, &c}) {
      const int32_t left = int32_t(s->tokens.size()) - s->computed;
      if (left == 1 && s->computed > 0) order.push_back(s);
    }
    for (Seq* s : {&a, &b, &c}) {
      const int32_t left = int32_t(s->tokens.size()) - s->computed;
      const bool started = step >= (s == &c ? 3 : 0);
      if (started && (left > 1 || s->computed == 0)) order.push_back(s);
    }
    for (Seq* s : order) {
      const int32_t left = int32_t(s->tokens.size()) - s->computed;
      planner.add(*s, s == &a ? left : std::min(left, 16));
    }
    const StepPlan plan = planner.take();
    std::vector<float> logits;
    runner->forward(plan, &logits);
    ASSERT_EQ(logits.size(), plan.sample_indices.size() * size_t(V));
    for (size_t r = 0; r < plan.sample_indices.size(); ++r) {
      Seq* s = order[plan.sample_indices[r]];
      const float* row = logits.data() + r * V;
      EXPECT_LE(diff_vs_oracle(*weights_, *s, row), kTol)
          << "step " << step << ", sequence of " << s->tokens.size() << " tokens";
      s->tokens.push_back(argmax(row, V));  // decoded next step
    }
  }
  EXPECT_GE(b.tokens.size(), 47u) << "b finished its prompt and decoded";
  EXPECT_GE(c.tokens.size(), 11u);
}

INSTANTIATE_TEST_SUITE_P(Flavours, RunnerVsOracle,
                         ::testing::Values(Flavour{"qwen3", 4, 1, 32, 4},   // qk norm, GQA 4
                                           Flavour{"qwen2", 2, 2, 64, 16},  // biases, no GQA
                                           Flavour{"llama", 8, 2, 16, 5}),  // GQA 4, odd blocks
                         [](const auto& info) { return info.param.type; });

TEST(ModelRunner, RejectsInconsistentPlans) {
  ModelConfig c = config_for({"qwen3", 4, 2, 32, 4});
  ModelRunner runner(test_weights(c, 1), KvCacheSpec{8, 4});
  Seq s(random_tokens(6, c.vocab_size, 1));
  Planner planner(8, 4, 1);
  planner.add(s, 6);
  const StepPlan good = planner.take();
  std::vector<float> logits;
  EXPECT_NO_THROW(runner.forward(good, &logits));
  auto broken = [&](auto edit) {
    StepPlan p = good;
    edit(p);
    return p;
  };
  EXPECT_THROW(runner.forward(broken([](StepPlan& p) { p.positions[2] = 7; }), &logits),
               std::invalid_argument);
  EXPECT_THROW(runner.forward(broken([](StepPlan& p) { p.slot_mapping[5] += 1; }), &logits),
               std::invalid_argument);
  EXPECT_THROW(runner.forward(broken([](StepPlan& p) { p.block_tables[0] = 8; }), &logits),
               std::invalid_argument);
  EXPECT_THROW(runner.forward(broken([&](StepPlan& p) { p.token_ids[0] = c.vocab_size; }), &logits),
               std::invalid_argument);
  EXPECT_THROW(runner.forward(broken([](StepPlan& p) { p.sample_indices = {1}; }), &logits),
               std::invalid_argument);
  EXPECT_THROW(runner.forward(broken([](StepPlan& p) { p.context_len[0] = 5; }), &logits),
               std::invalid_argument);
}

TEST(ModelRunner, EmptyPlanGivesNoLogits) {
  ModelConfig c = config_for({"llama", 4, 2, 32, 4});
  ModelRunner runner(test_weights(c, 1), KvCacheSpec{8, 4});
  std::vector<float> logits(3, 1.f);
  runner.forward(StepPlan{}, &logits);
  EXPECT_TRUE(logits.empty());
  EXPECT_THROW(runner.forward(StepPlan{}, nullptr), std::invalid_argument);
}

TEST(ModelRunner, KvBytesPerBlockCountsKAndVOfEveryLayer) {
  ModelConfig c = config_for({"qwen3", 4, 2, 32, 4});
  EXPECT_EQ(ModelRunner::kv_bytes_per_block(c, 16), 2 * 2 * 16 * (2 * 32) * 4);
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

// The whole forward on every kernel path this CPU can run (each ISA forced, each linear kernel
// forced, and auto): a mixed prefill + decode batch against the oracle, so an AVX-512 machine
// still checks the AVX2 engine end to end.
TEST(ModelRunner, EveryKernelPathMatchesTheOracle) {
  const Flavour f{"qwen3", 4, 2, 32, 4};
  const ModelConfig c = config_for(f);
  const auto weights = test_weights(c, 3);
  const KernelIsa before = active_kernel_isa();
  int paths = 0;
  for (KernelIsa isa : runnable_kernel_isas()) {
    force_kernel_isa(isa);
    for (LinearMode mode : {LinearMode::packed, LinearMode::blas, LinearMode::auto_tune}) {
      RunnerOptions o;
      o.linear_mode = mode;
      o.tuning_cache = "off";
      o.tuning_budget_s = 0.3;  // auto still times the first buckets; the rest fall back
      ModelRunner runner(weights, KvCacheSpec{64, f.block_size}, o);
      EXPECT_NE(runner.kernel_summary().find(kernel_isa_name(isa)), std::string::npos);
      EXPECT_NE(runner.kernel_summary().find(linear_mode_name(mode)), std::string::npos);
      Seq a(random_tokens(23, c.vocab_size, 11)), b(random_tokens(3, c.vocab_size, 12));
      Planner planner(64, f.block_size, 1);
      planner.add(a, 23);
      planner.add(b, 3);
      std::vector<float> logits;
      runner.forward(planner.take(), &logits);
      // Feed back the argmax tokens: one decode step for both, in one batch.
      const int32_t V = c.vocab_size;
      a.tokens.push_back(argmax(logits.data(), V));
      b.tokens.push_back(argmax(logits.data() + V, V));
      planner.add(a, 1);
      planner.add(b, 1);
      runner.forward(planner.take(), &logits);
      EXPECT_LE(diff_vs_oracle(*weights, a, logits.data()), kTol)
          << kernel_isa_name(isa) << " " << linear_mode_name(mode);
      EXPECT_LE(diff_vs_oracle(*weights, b, logits.data() + V), kTol)
          << kernel_isa_name(isa) << " " << linear_mode_name(mode);
      ++paths;
    }
  }
  force_kernel_isa(before);
  EXPECT_GE(paths, 3);
}

}  // namespace
}  // namespace ps
