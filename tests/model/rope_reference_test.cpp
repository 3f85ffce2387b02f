// RoPE scaling against real PyTorch (issue #17): tests/tools/make_rope_fixtures.py writes one
// random-weight fp32 checkpoint per rope type (linear, dynamic, llama3, yarn, yarn with mscale,
// partial_rotary_factor alone and with llama3, SmolLM3 with a NoPE layer, Phi-3's LongRoPE with
// its long and its short factors from fused qkv/gate_up checkpoints, Gemma 3's sliding and
// global layers with their two RoPE bases, Gemma 2's soft-capped scores and logits) and the logits
// of a torch forward written from HF's formulas over 200 tokens, with an original context of 64
// positions. The naive oracle and the packed ModelRunner (chunked prefill, two sequences per step,
// then decode) must match those logits within 1e-4 at every position, far past the original context
// included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/loader.h"
#include "cpu/model_runner.h"
#include "model/model_weights.h"
#include "model/rope_scaling.h"
#include "reference/naive_forward.h"

namespace ps {
namespace {

namespace fs = std::filesystem;
constexpr float kTol = 1e-4f;

// The fixtures, written once per test program run into a temp dir (removed at exit).
class Fixtures {
 public:
  static const Fixtures& get() {
    static Fixtures f;
    return f;
  }
  ~Fixtures() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }
  const std::string& error() const { return error_; }

 private:
  Fixtures() {
    std::string pattern = ::testing::TempDir() + "pagedserve_rope_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      error_ = "mkdtemp failed";
      return;
    }
    dir_ = pattern;
    const std::string cmd = std::string("/usr/bin/python3 ") + PAGEDSERVE_SOURCE_DIR +
                            "/tests/tools/make_rope_fixtures.py " + dir_ + " > " + dir_ +
                            "/make.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir_ + "/make.log");
      error_ = "make_rope_fixtures.py failed (needs python3-torch): " +
               std::string(std::istreambuf_iterator<char>(log), {});
    }
  }
  std::string dir_, error_;
};

struct Reference {
  std::vector<int32_t> tokens;
  int64_t rows = 0, vocab = 0;
  std::vector<float> logits;  // [rows, vocab]
  nlohmann::json meta;
  const float* row(int64_t r) const { return logits.data() + r * vocab; }
};

Reference read_reference(const std::string& dir) {
  Reference ref;
  std::ifstream meta_in(dir + "/reference.json");
  ref.meta = nlohmann::json::parse(meta_in);
  ref.tokens = ref.meta.at("tokens").get<std::vector<int32_t>>();
  ref.rows = ref.meta.at("shape").at(0).get<int64_t>();
  ref.vocab = ref.meta.at("shape").at(1).get<int64_t>();
  ref.logits.resize(size_t(ref.rows * ref.vocab));
  std::ifstream in(dir + "/logits.f32", std::ios::binary);
  in.read(reinterpret_cast<char*>(ref.logits.data()), std::streamsize(ref.logits.size() * 4));
  if (!in) throw std::runtime_error(dir + "/logits.f32: short read");
  return ref;
}

float max_diff(const float* a, const float* b, int64_t n) {
  float d = 0;
  for (int64_t i = 0; i < n; ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

class RopeReference : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const Fixtures& f = Fixtures::get();
    ASSERT_EQ(f.error(), "");
    dir_ = f.dir() + "/" + GetParam();
    ref_ = read_reference(dir_);
    model_ = load_model(dir_);
    ASSERT_EQ(ref_.rows, int64_t(ref_.tokens.size()));
    ASSERT_EQ(ref_.vocab, model_.config.vocab_size);
  }
  std::string dir_;
  Reference ref_;
  LoadedModel model_;
};

TEST_P(RopeReference, FrequenciesAndAttentionFactorMatchHfFormulas) {
  const RopeFrequencies f = rope_frequencies(model_.config);
  const auto want = ref_.meta.at("inv_freq").get<std::vector<double>>();
  EXPECT_EQ(f.rotary_dim, ref_.meta.at("rotary_dim").get<int32_t>());
  ASSERT_EQ(f.inv_freq.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(f.inv_freq[i], want[i], 2e-7 * want[i]) << "inv_freq[" << i << "]";
  }
  EXPECT_NEAR(f.attention_factor, ref_.meta.at("attention_factor").get<double>(), 1e-6);
}

TEST_P(RopeReference, NaiveOracleMatchesPyTorchPastTheOriginalContext) {
  const std::vector<float> got = naive_logits(*model_.weights, ref_.tokens);
  ASSERT_EQ(got.size(), ref_.logits.size());
  float worst = 0;
  for (int64_t r = 0; r < ref_.rows; ++r) {
    const float d = max_diff(got.data() + r * ref_.vocab, ref_.row(r), ref_.vocab);
    EXPECT_LE(d, kTol) << "position " << r;
    worst = std::max(worst, d);
  }
  RecordProperty("max_abs_diff", std::to_string(worst));

  // The check can fail: the same weights with plain RoPE (on every layer: smollm3_nope's NoPE
  // layer rotated too) and no soft-capping (gemma2) are far from the reference, past the original
  // 64 positions (and, for all but llama3/partial, inside them too).
  ModelWeights plain = *model_.weights;
  plain.config.rope_scaling = RopeScaling{};
  plain.config.partial_rotary_factor = 1.0f;
  plain.config.rope_layers.clear();
  plain.config.attn_logit_softcapping = 0;  // gemma2's feature is the soft-capping
  plain.config.final_logit_softcapping = 0;
  const std::vector<float> unscaled = naive_logits(plain, ref_.tokens);
  const int64_t past = 150;
  EXPECT_GT(max_diff(unscaled.data() + past * ref_.vocab, ref_.row(past),
                     (ref_.rows - past) * ref_.vocab),
            1e-2f);
}

// One sequence's blocks and plan rows, for hand-built steps.
struct Seq {
  std::vector<int32_t> tokens;
  std::vector<int32_t> blocks;
  int32_t computed = 0;
};

void add_chunk(StepPlan& p, Seq& s, int32_t n, int32_t block_size) {
  if (p.query_start.empty()) p.query_start.push_back(0);
  p.seq_ids.push_back(p.num_seqs());
  for (int32_t pos = s.computed; pos < s.computed + n; ++pos) {
    p.token_ids.push_back(s.tokens[pos]);
    p.positions.push_back(pos);
    p.slot_mapping.push_back(s.blocks[pos / block_size] * block_size + pos % block_size);
  }
  s.computed += n;
  p.query_start.push_back(p.query_start.back() + n);
  p.context_len.push_back(s.computed);
  p.sample_indices.push_back(p.num_seqs() - 1);  // every chunk samples: its last row is checked
}

void finish_plan(StepPlan& p, const std::vector<const Seq*>& seqs) {
  p.max_blocks_per_seq = 0;
  for (const Seq* s : seqs)
    p.max_blocks_per_seq = std::max(p.max_blocks_per_seq, int32_t(s->blocks.size()));
  p.block_tables.assign(seqs.size() * size_t(p.max_blocks_per_seq), -1);
  for (size_t i = 0; i < seqs.size(); ++i) {
    std::copy(seqs[i]->blocks.begin(), seqs[i]->blocks.end(),
              p.block_tables.begin() + int64_t(i) * p.max_blocks_per_seq);
  }
}

TEST_P(RopeReference, RunnerMatchesPyTorchInChunksBatchesAndDecode) {
  constexpr int32_t kBlock = 16;
  RunnerOptions options;
  options.linear_mode = LinearMode::packed;  // no load-time tuning: this test is about RoPE
  options.tuning_cache = "off";
  ModelRunner runner(model_.weights, KvCacheSpec{64, kBlock}, options);
  // A is the whole sequence; B its first 120 tokens, so B's rows are A's reference rows too.
  Seq a{ref_.tokens, {}, 0};
  Seq b{std::vector<int32_t>(ref_.tokens.begin(), ref_.tokens.begin() + 120), {}, 0};
  for (int32_t i = 0; i < 13; ++i) a.blocks.push_back(2 * i + 1);  // interleaved, out of order
  for (int32_t i = 0; i < 8; ++i) b.blocks.push_back(40 - 2 * i);
  // Chunks that straddle the original context (64) and blocks; then A decodes alone.
  const std::vector<std::pair<int32_t, int32_t>> chunks = {{37, 50}, {27, 14}, {1, 56}, {65, 0}};
  std::vector<float> logits;
  int checked = 0;
  float worst = 0;
  auto check_rows = [&](const StepPlan& p) {
    ASSERT_EQ(logits.size(), p.sample_indices.size() * size_t(ref_.vocab));
    for (size_t i = 0; i < p.sample_indices.size(); ++i) {
      const int32_t s = p.sample_indices[i];
      const int32_t pos = p.positions[p.query_start[s + 1] - 1];
      const float d = max_diff(logits.data() + i * ref_.vocab, ref_.row(pos), ref_.vocab);
      EXPECT_LE(d, kTol) << "position " << pos << " of sequence " << s;
      worst = std::max(worst, d);
      ++checked;
    }
  };
  for (const auto& [na, nb] : chunks) {
    StepPlan p;
    std::vector<const Seq*> in_plan{&a};
    add_chunk(p, a, na, kBlock);
    if (nb > 0) {
      add_chunk(p, b, nb, kBlock);
      in_plan.push_back(&b);
    }
    finish_plan(p, in_plan);
    runner.forward(p, &logits);
    check_rows(p);
  }
  ASSERT_EQ(b.computed, 120);
  while (a.computed < int32_t(a.tokens.size())) {
    StepPlan p;
    add_chunk(p, a, 1, kBlock);
    finish_plan(p, {&a});
    runner.forward(p, &logits);
    check_rows(p);
  }
  EXPECT_EQ(checked, 4 + 3 + 70);
  RecordProperty("max_abs_diff", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Types, RopeReference,
                         ::testing::Values("linear", "dynamic", "llama3", "yarn", "yarn_mscale",
                                           "partial", "llama3_partial", "smollm3_nope",
                                           "phi3_longrope", "phi3_short", "gemma3", "gemma2"),
                         [](const auto& info) { return std::string(info.param); });

// The fixed dynamic base (rope_scaling.h): a sequence's logits do not depend on its length, so
// the first 50 rows of a 200-token run equal a 50-token run (HF's length-dependent base would
// change them once the sequence passes max_position_embeddings).
TEST(RopeReferenceDynamic, LogitsOfAPrefixDoNotDependOnTheSequenceLength) {
  const Fixtures& f = Fixtures::get();
  ASSERT_EQ(f.error(), "");
  const std::string dir = f.dir() + "/dynamic";
  const Reference ref = read_reference(dir);
  const LoadedModel model = load_model(dir);
  const std::vector<int32_t> prefix(ref.tokens.begin(), ref.tokens.begin() + 50);
  const std::vector<float> short_run = naive_logits(*model.weights, prefix);
  const std::vector<float> long_run = naive_logits(*model.weights, ref.tokens);
  EXPECT_LE(max_diff(short_run.data(), long_run.data(), 50 * ref.vocab), 1e-5f);
  EXPECT_LE(max_diff(short_run.data(), ref.row(0), 50 * ref.vocab), kTol);
}

}  // namespace
}  // namespace ps
