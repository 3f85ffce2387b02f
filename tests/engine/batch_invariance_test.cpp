// docs/architecture.md §5: greedy output and logits do not depend on what else is in the batch, on
// how a prompt was chunked, on prefix-cache hits, or on preemption. Each test packs many sequences
// through the real Scheduler + ModelRunner and compares every sampled logits row against the
// naive oracle run on that sequence alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "cpu/model_runner.h"
#include "executor/executor_factory.h"
#include "reference/naive_forward.h"
#include "scheduler/scheduler.h"
#include "tests/engine/test_model.h"

namespace ps {
namespace {

using testing_util::random_prompt;
using testing_util::small_config;

// PAGEDSERVE_TEST_DEVICE=cuda (scripts/device-check.sh, on a GPU machine): the same tests through
// the CUDA executor, on a head_dim its attention kernel takes, compared with a bf16 tolerance.
bool on_cuda() {
  const char* d = std::getenv("PAGEDSERVE_TEST_DEVICE");
  return d != nullptr && std::string(d) == "cuda";
}

ModelConfig device_config(const std::string& model_type) {
  ModelConfig c = small_config(model_type);
  if (on_cuda()) c.head_dim = 64;
  return c;
}

std::unique_ptr<Executor> test_executor(const LoadedModel& model, const SchedulerConfig& sc) {
  if (!on_cuda()) {
    return std::make_unique<ModelRunner>(
        model.weights, KvCacheSpec{sc.num_blocks, sc.block_size, sc.num_sliding_blocks,
                                   sc.num_state_slots, sc.num_state_snapshots});
  }
  ExecutorRequest r;
  r.device.device = Device::cuda;
  r.block_size = sc.block_size;
  r.num_blocks = sc.num_blocks;
  r.max_batched_tokens = sc.max_batched_tokens;
  r.max_num_seqs = sc.max_num_seqs;
  return make_executor(model.weights, r).executor;
}

// fp32 on CPU; on CUDA weights, activations and the cache are bf16 (8 significant bits), so the
// bound is relative to the row's scale.
float tolerance(const float* want, int32_t vocab) {
  if (!on_cuda()) return 1e-4f;
  float scale = 1.0f;
  for (int32_t v = 0; v < vocab; ++v) scale = std::max(scale, std::fabs(want[v]));
  return 2e-2f * scale;
}

struct RunResult {
  std::map<SeqId, std::vector<int32_t>> prompts;
  std::map<SeqId, std::vector<int32_t>> outputs;
  std::map<SeqId, std::vector<std::vector<float>>> logits;  // one row per sampled token
  int chunked_prefill_steps = 0;  // steps where some sequence advanced without sampling
  int mixed_steps = 0;            // steps with both prefill and decode tokens
  int max_seqs_in_step = 0;
  uint64_t preemptions = 0;
  uint64_t prefix_hits = 0;
  // Sliding-window pool (kvcache/kv_pools.h): the most blocks one step's sequences held in the
  // full pool beyond what they held in the sliding pool (what window release gave back).
  int32_t max_blocks_released = 0;
  // Hybrid models: prefix hits that restored a recurrent-state snapshot, and snapshots taken.
  size_t state_restores = 0, state_snapshots = 0;
};

bool has_sliding_layers(const ModelConfig& c) {
  return std::ranges::count(c.layer_types, LayerType::sliding_attention) > 0;
}

// Greedy-decodes every prompt for `new_tokens` tokens. Prompts listed in `later` are added
// only once the first batch has finished (so they can hit the prefix cache).
RunResult run_greedy(const LoadedModel& model, const std::vector<std::vector<int32_t>>& first,
                     const std::vector<std::vector<int32_t>>& later, int new_tokens,
                     SchedulerConfig sc) {
  const int32_t vocab = model.config.vocab_size;
  // Sliding layers get their own pool on CPU (as the engine gives them), the same size as the
  // full one unless the test sized it.
  if (!on_cuda() && has_sliding_layers(model.config)) {
    if (sc.num_sliding_blocks == 0) sc.num_sliding_blocks = sc.num_blocks;
    sc.sliding_window = model.config.sliding_window;
  }
  // Linear-attention layers: one recurrent state slot per sequence that may run, unless the test
  // sized the state pool.
  // Prefix hits restore state snapshots taken every block (4 held unless the test says).
  if (model.config.num_linear_layers() > 0 && sc.num_state_slots == 0) {
    sc.num_state_slots = sc.max_num_seqs;
  }
  if (model.config.num_linear_layers() > 0 && sc.state_snapshot_interval == 0) {
    sc.num_state_snapshots = std::max(sc.num_state_snapshots, 4);
    sc.state_snapshot_interval = sc.block_size;
  }
  Scheduler sched(sc);
  std::unique_ptr<Executor> runner = test_executor(model, sc);
  RunResult r;
  SeqId next = 1;
  auto add_all = [&](const std::vector<std::vector<int32_t>>& prompts) {
    for (const auto& p : prompts) {
      r.prompts[next] = p;
      sched.add(next++, p);
    }
  };
  add_all(first);
  bool later_added = later.empty();
  std::vector<float> logits;
  for (int guard = 0; guard < 100000; ++guard) {
    if (!sched.has_unfinished()) {
      if (later_added) break;
      add_all(later);
      later_added = true;
    }
    StepPlan plan = sched.schedule();
    EXPECT_TRUE(sched.take_rejected().empty());
    if (plan.empty()) continue;
    r.max_seqs_in_step = std::max(r.max_seqs_in_step, plan.num_seqs());
    if (plan.num_prefill_tokens > 0 && plan.num_decode_tokens > 0) ++r.mixed_steps;
    if (static_cast<int32_t>(plan.sample_indices.size()) < plan.num_seqs())
      ++r.chunked_prefill_steps;
    runner->forward(plan, &logits);
    std::vector<int32_t> sampled;
    for (size_t i = 0; i < plan.sample_indices.size(); ++i) {
      const float* row = logits.data() + i * vocab;
      SeqId id = plan.seq_ids[plan.sample_indices[i]];
      r.logits[id].emplace_back(row, row + vocab);
      sampled.push_back(static_cast<int32_t>(std::max_element(row, row + vocab) - row));
    }
    sched.postprocess(plan, sampled);
    for (size_t i = 0; i < sampled.size(); ++i) {
      SeqId id = plan.seq_ids[plan.sample_indices[i]];
      r.outputs[id].push_back(sampled[i]);
      if (static_cast<int>(r.outputs[id].size()) == new_tokens) sched.finish(id);
    }
    sched.kv_pools().check_integrity();
    sched.check_integrity();  // state slots and snapshots: in use + free = pool
    r.state_restores += plan.state_restores.size();
    r.state_snapshots += plan.state_snapshots.size();
    if (const BlockManager* sliding = sched.kv_pools().sliding()) {
      r.max_blocks_released =
          std::max(r.max_blocks_released,
                   sched.block_manager().num_active_blocks() - sliding->num_active_blocks());
    }
  }
  EXPECT_FALSE(sched.has_unfinished()) << "the run did not finish";
  const BlockManager& bm = sched.block_manager();
  EXPECT_EQ(bm.num_active_blocks(), 0);
  EXPECT_EQ(bm.num_free_blocks() + bm.num_cached_blocks(), bm.num_blocks());
  if (const BlockManager* sliding = sched.kv_pools().sliding()) {
    EXPECT_EQ(sliding->num_active_blocks(), 0);
    EXPECT_EQ(sliding->num_free_blocks() + sliding->num_cached_blocks(), sliding->num_blocks());
  }
  EXPECT_EQ(sched.state_slots().num_in_use(), 0);
  EXPECT_EQ(sched.state_slots().num_free(), sc.num_state_slots);
  r.preemptions = sched.num_preemptions();
  r.prefix_hits = bm.prefix_hits();
  return r;
}

// Every sampled row must match the oracle's row at the same position within 1e-4 (CUDA: the bf16
// bound of tolerance()), and greedy tokens must agree wherever the oracle's top-2 margin is clear.
void expect_matches_oracle(const LoadedModel& model, const RunResult& r, int new_tokens) {
  const int32_t vocab = model.config.vocab_size;
  for (const auto& [id, prompt] : r.prompts) {
    const auto& out = r.outputs.at(id);
    ASSERT_EQ(static_cast<int>(out.size()), new_tokens) << "seq " << id;
    std::vector<int32_t> full = prompt;
    full.insert(full.end(), out.begin(), out.end() - 1);
    std::vector<float> ref = naive_logits(*model.weights, full);
    const auto& rows = r.logits.at(id);
    for (int k = 0; k < new_tokens; ++k) {
      const float* want = ref.data() + (prompt.size() - 1 + k) * vocab;
      const auto& got = rows[k];
      float max_diff = 0;
      for (int v = 0; v < vocab; ++v) max_diff = std::max(max_diff, std::fabs(got[v] - want[v]));
      const float tol = tolerance(want, vocab);
      ASSERT_LE(max_diff, tol) << "seq " << id << " token " << k;
      std::vector<float> sorted(want, want + vocab);
      std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
      if (sorted[0] - sorted[1] > (on_cuda() ? 2 * tol : 1e-4f)) {
        int32_t want_tok = static_cast<int32_t>(std::max_element(want, want + vocab) - want);
        ASSERT_EQ(out[k], want_tok) << "seq " << id << " token " << k;
      }
    }
  }
}

std::vector<std::vector<int32_t>> prompts_of_lengths(int count, int min_len, int max_len,
                                                     uint32_t seed, int32_t vocab) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> len(min_len, max_len);
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < count; ++i) out.push_back(random_prompt(rng, len(rng), vocab));
  return out;
}

class BatchInvariance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (on_cuda() && model.config.moe.num_experts > 0) GTEST_SKIP() << "MoE is CPU-only";
    if (on_cuda() && !model.config.rope_layers.empty()) GTEST_SKIP() << "NoPE is CPU-only";
    if (on_cuda() && model.config.gemma_layout()) GTEST_SKIP() << "Gemma is CPU-only";
    if (on_cuda() && model.config.gpt_oss()) GTEST_SKIP() << "gpt-oss is CPU-only";
    if (on_cuda() && model.config.num_linear_layers() > 0) {
      GTEST_SKIP() << "linear-attention layers are CPU-only";
    }
    if (on_cuda() && model.config.partial_rotary_factor != 1.0f) {
      GTEST_SKIP() << "partial rotary is CPU-only";
    }
  }
  LoadedModel model = random_model(device_config(GetParam()), 7);
};

TEST_P(BatchInvariance, ThirtyTwoPromptsTogetherMatchTheOracleAlone) {
  auto prompts = prompts_of_lengths(32, 1, 70, 11, model.config.vocab_size);
  SchedulerConfig sc;
  sc.num_blocks = 512;
  sc.block_size = 16;
  sc.max_num_seqs = 32;
  sc.max_batched_tokens = 4096;
  RunResult r = run_greedy(model, prompts, {}, 6, sc);
  EXPECT_GT(r.max_seqs_in_step, 16);
  // Prompts past the window (12) plus a block (16) give their oldest sliding blocks back.
  if (!on_cuda() && has_sliding_layers(model.config)) {
    EXPECT_GT(r.max_blocks_released, 0);
  }
  expect_matches_oracle(model, r, 6);
}

TEST_P(BatchInvariance, ChunkedPrefillMixedWithDecodeMatchesTheOracle) {
  auto prompts = prompts_of_lengths(12, 20, 90, 12, model.config.vocab_size);
  SchedulerConfig sc;
  sc.num_blocks = 256;
  sc.block_size = 8;
  sc.max_num_seqs = 12;
  sc.max_batched_tokens = 24;  // far below the prompt lengths: prompts must be chunked
  RunResult r = run_greedy(model, prompts, {}, 5, sc);
  EXPECT_GT(r.chunked_prefill_steps, 0) << "no prompt was chunked";
  EXPECT_GT(r.mixed_steps, 0) << "prefill and decode never shared a step";
  expect_matches_oracle(model, r, 5);
}

TEST_P(BatchInvariance, PreemptionUnderATinyPoolMatchesTheOracle) {
  auto prompts = prompts_of_lengths(10, 10, 40, 13, model.config.vocab_size);
  SchedulerConfig sc;
  sc.block_size = 4;
  sc.num_blocks = 24;  // 96 token slots for 10 sequences that grow to ~60 tokens each
  sc.max_num_seqs = 10;
  sc.max_batched_tokens = 64;
  RunResult r = run_greedy(model, prompts, {}, 20, sc);
  EXPECT_GT(r.preemptions, 0u) << "the pool was meant to force preemption";
  expect_matches_oracle(model, r, 20);
}

TEST_P(BatchInvariance, SharedPrefixHitsTheCacheAndMatchesTheOracle) {
  std::mt19937 rng(14);
  auto prefix = random_prompt(rng, 48, model.config.vocab_size);
  std::vector<std::vector<int32_t>> first = {prefix}, later;
  first[0].push_back(5);
  for (int i = 0; i < 8; ++i) {
    auto p = prefix;
    auto tail = random_prompt(rng, 1 + i * 3, model.config.vocab_size);
    p.insert(p.end(), tail.begin(), tail.end());
    later.push_back(p);
  }
  SchedulerConfig sc;
  sc.num_blocks = 128;
  sc.block_size = 16;
  sc.max_num_seqs = 8;
  sc.max_batched_tokens = 512;
  RunResult r = run_greedy(model, first, later, 4, sc);
  // 8 later prompts each find the 3 full blocks of the shared 48-token prefix; a model with
  // recurrent layers also restores the state snapshot taken at token 48.
  EXPECT_GE(r.prefix_hits, 8u * 48u);
  if (model.config.num_linear_layers() > 0) {
    EXPECT_EQ(r.state_restores, 8u);
  }
  expect_matches_oracle(model, r, 4);
}

// A sliding pool far smaller than the full one: it is what runs out, so admission waits on it,
// prefill chunks shrink to it and decoding preempts for it, and the windows it keeps are still
// all that every sliding layer reads.
TEST_P(BatchInvariance, TinySlidingPoolPreemptsAndMatchesTheOracle) {
  if (on_cuda() || !has_sliding_layers(model.config)) GTEST_SKIP() << "no sliding-window pool";
  auto prompts = prompts_of_lengths(10, 10, 40, 15, model.config.vocab_size);
  SchedulerConfig sc;
  sc.block_size = 4;
  sc.num_blocks = 256;
  sc.num_sliding_blocks = 11;  // a 40-token prompt takes 10; a decoding sequence keeps <= 5
  sc.max_num_seqs = 10;
  sc.max_batched_tokens = 64;
  RunResult r = run_greedy(model, prompts, {}, 20, sc);
  EXPECT_GT(r.preemptions, 0u) << "the sliding pool was meant to force preemption";
  EXPECT_GT(r.max_blocks_released, 0);
  expect_matches_oracle(model, r, 20);
}

// Fewer state slots than --max-num-seqs: admission waits for a slot, never runs more sequences
// than there are states, and every slot a finished sequence gives back is zeroed for the next.
TEST_P(BatchInvariance, FewStateSlotsLimitTheBatchAndMatchTheOracle) {
  if (model.config.num_linear_layers() == 0) GTEST_SKIP() << "no recurrent layers";
  auto prompts = prompts_of_lengths(9, 5, 40, 16, model.config.vocab_size);
  SchedulerConfig sc;
  sc.block_size = 8;
  sc.num_blocks = 256;
  sc.max_num_seqs = 9;
  sc.num_state_slots = 3;
  sc.max_batched_tokens = 64;
  RunResult r = run_greedy(model, prompts, {}, 7, sc);
  EXPECT_EQ(r.max_seqs_in_step, 3);
  expect_matches_oracle(model, r, 7);
}

// Snapshots every 2 blocks but only 2 held: the shared prefix's snapshots are evicted by the
// later prompts' own, and a prefix whose state is gone is never reused, though its KV blocks
// are still cached; every output still matches the oracle.
TEST_P(BatchInvariance, EvictedStateSnapshotsCutPrefixHitsBack) {
  if (model.config.num_linear_layers() == 0) GTEST_SKIP() << "no recurrent layers";
  std::mt19937 rng(17);
  auto prefix = random_prompt(rng, 64, model.config.vocab_size);
  std::vector<std::vector<int32_t>> first = {prefix}, later;
  first[0].push_back(7);
  for (int i = 0; i < 6; ++i) {
    auto p = prefix;
    auto tail = random_prompt(rng, 20 + i * 7, model.config.vocab_size);
    p.insert(p.end(), tail.begin(), tail.end());
    later.push_back(p);
  }
  SchedulerConfig sc;
  sc.num_blocks = 128;
  sc.block_size = 8;
  sc.max_num_seqs = 2;  // the later prompts run two at a time, each taking snapshots
  sc.max_batched_tokens = 512;
  sc.num_state_snapshots = 2;
  sc.state_snapshot_interval = 16;
  RunResult r = run_greedy(model, first, later, 3, sc);
  // The first prompt snapshots its deepest boundaries (48, 64). The first pair of later prompts
  // both restore 64 and each writes its own deeper snapshot, evicting 48 then 64: the other
  // four find the shared blocks still cached but no state for them, and reuse nothing.
  EXPECT_GE(r.state_snapshots, 8u);
  EXPECT_EQ(r.state_restores, 2u);
  EXPECT_EQ(r.prefix_hits, 2u * 64u);
  expect_matches_oracle(model, r, 3);
}

INSTANTIATE_TEST_SUITE_P(Architectures, BatchInvariance,
                         ::testing::Values("qwen3", "qwen2", "llama", "qwen3_moe", "minimind",
                                           "smollm3", "phi3", "gemma3_text", "gemma2", "gpt_oss",
                                           "qwen3_5_text", "qwen3_next"));

}  // namespace
}  // namespace ps
