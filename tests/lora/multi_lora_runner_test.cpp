// One ModelRunner serving the base and three adapters in the same steps (issue #22): every
// sampled logits row of every sequence must match the naive oracle run on the model merged with
// that sequence's adapter by merge-lora, within 1e-4, through chunked prefill, mixed
// prefill/decode steps and the last layer's compaction to sampled rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "cpu/model_runner.h"
#include "reference/naive_forward.h"
#include "scheduler/scheduler.h"
#include "tests/lora/lora_fixtures.h"

namespace ps {
namespace {

using lora_test::adapter_path;
using lora_test::base_config;

struct Seq {
  std::vector<int32_t> prompt;
  int adapter = -1;  // index into the adapter list, -1: base
  std::vector<int32_t> out;
  std::vector<std::vector<float>> logits;
};

float max_abs_diff(const float* a, const float* b, int n) {
  float m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

class MultiLoraRunner : public ::testing::Test {
 protected:
  LoadedModel base = random_model(base_config(), 5);
  std::vector<std::string> names = {"alpha", "beta", "gamma"};

  // Greedy-decodes every sequence together through one runner holding all adapters.
  void run(std::vector<Seq>& seqs, int new_tokens, int32_t max_batched_tokens) {
    SchedulerConfig sc;
    sc.num_blocks = 256;
    sc.block_size = 8;
    sc.max_num_seqs = 16;
    sc.max_batched_tokens = max_batched_tokens;
    Scheduler sched(sc);
    ModelRunner runner(base.weights, KvCacheSpec{sc.num_blocks, sc.block_size});
    for (size_t i = 0; i < names.size(); ++i) {
      runner.set_lora_adapter(int32_t(i),
                              load_lora_adapter(base.config, adapter_path(names[i]), 64));
    }
    for (size_t i = 0; i < seqs.size(); ++i) {
      SeqAdapter a;
      a.slot = seqs[i].adapter;
      a.prefix_root = kRootBlockKey + uint64_t(seqs[i].adapter + 1);
      sched.add(SeqId(i), seqs[i].prompt, a);
    }
    const int32_t vocab = base.config.vocab_size;
    std::vector<float> logits;
    int mixed = 0, chunked = 0;
    while (sched.has_unfinished()) {
      StepPlan plan = sched.schedule();
      ASSERT_FALSE(plan.empty());
      if (plan.num_prefill_tokens > 0 && plan.num_decode_tokens > 0) ++mixed;
      if (plan.sample_indices.size() < size_t(plan.num_seqs())) ++chunked;
      runner.forward(plan, &logits);
      std::vector<int32_t> sampled;
      for (size_t r = 0; r < plan.sample_indices.size(); ++r) {
        const float* row = logits.data() + r * vocab;
        Seq& s = seqs[size_t(plan.seq_ids[plan.sample_indices[r]])];
        s.logits.emplace_back(row, row + vocab);
        sampled.push_back(int32_t(std::max_element(row, row + vocab) - row));
      }
      sched.postprocess(plan, sampled);
      for (size_t r = 0; r < sampled.size(); ++r) {
        const SeqId id = plan.seq_ids[plan.sample_indices[r]];
        seqs[size_t(id)].out.push_back(sampled[r]);
        if (int(seqs[size_t(id)].out.size()) == new_tokens) sched.finish(id);
      }
    }
    if (max_batched_tokens < 64) {
      EXPECT_GT(mixed, 0) << "no step mixed prefill and decode";
      EXPECT_GT(chunked, 0) << "no prompt was chunked";
    }
  }

  // Each sequence against the oracle on its merged model; returns the largest difference seen
  // between an adapter's rows and the base model's at the same tokens (adapters must matter).
  float expect_matches_merged(const std::vector<Seq>& seqs, int new_tokens) {
    std::vector<LoadedModel> merged;
    for (const auto& n : names) merged.push_back(merge_lora(base, adapter_path(n)));
    const int32_t vocab = base.config.vocab_size;
    float adapter_effect = 0;
    for (size_t i = 0; i < seqs.size(); ++i) {
      const Seq& s = seqs[i];
      EXPECT_EQ(int(s.out.size()), new_tokens);
      std::vector<int32_t> full = s.prompt;
      full.insert(full.end(), s.out.begin(), s.out.end() - 1);
      const LoadedModel& m = s.adapter < 0 ? base : merged[size_t(s.adapter)];
      const std::vector<float> want = naive_logits(*m.weights, full);
      const std::vector<float> plain = naive_logits(*base.weights, full);
      for (int k = 0; k < new_tokens; ++k) {
        const float* w = want.data() + (s.prompt.size() - 1 + size_t(k)) * vocab;
        EXPECT_LE(max_abs_diff(s.logits[size_t(k)].data(), w, vocab), 1e-4f)
            << "sequence " << i << " (adapter " << s.adapter << ") token " << k;
        std::vector<float> sorted(w, w + vocab);
        std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
        if (sorted[0] - sorted[1] > 1e-3f) {
          EXPECT_EQ(s.out[size_t(k)], int32_t(std::max_element(w, w + vocab) - w))
              << "sequence " << i << " token " << k;
        }
        if (s.adapter >= 0) {
          const float* p = plain.data() + (s.prompt.size() - 1 + size_t(k)) * vocab;
          adapter_effect = std::max(adapter_effect, max_abs_diff(w, p, vocab));
        }
      }
    }
    return adapter_effect;
  }

  std::vector<Seq> mixed_batch(int count, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> len(1, 40);
    std::vector<Seq> seqs;
    for (int i = 0; i < count; ++i) {
      Seq s;
      s.prompt = testing_util::random_prompt(rng, len(rng), base.config.vocab_size);
      s.adapter = i % 4 - 1;  // base, alpha, beta, gamma, base, ...
      seqs.push_back(std::move(s));
    }
    return seqs;
  }
};

TEST_F(MultiLoraRunner, MixedBatchMatchesEachMergedModelWithChunkedPrefill) {
  std::vector<Seq> seqs = mixed_batch(12, 3);
  run(seqs, 6, /*max_batched_tokens=*/40);
  EXPECT_GT(expect_matches_merged(seqs, 6), 1e-2f) << "the adapters barely change the logits";
}

TEST_F(MultiLoraRunner, MixedBatchMatchesEachMergedModelInOneWidePrefill) {
  std::vector<Seq> seqs = mixed_batch(8, 4);
  run(seqs, 4, /*max_batched_tokens=*/4096);
  EXPECT_GT(expect_matches_merged(seqs, 4), 1e-2f);
}

TEST_F(MultiLoraRunner, AllBaseBatchIgnoresResidentAdapters) {
  std::vector<Seq> seqs = mixed_batch(4, 5);
  for (Seq& s : seqs) s.adapter = -1;
  run(seqs, 3, 4096);
  expect_matches_merged(seqs, 3);
}

TEST_F(MultiLoraRunner, SequenceOnAnEmptySlotIsRefused) {
  ModelRunner runner(base.weights, KvCacheSpec{16, 8});
  StepPlan plan;
  plan.seq_ids = {1};
  plan.token_ids = {5};
  plan.positions = {0};
  plan.slot_mapping = {0};
  plan.query_start = {0, 1};
  plan.context_len = {1};
  plan.block_tables = {0};
  plan.max_blocks_per_seq = 1;
  plan.sample_indices = {0};
  plan.lora_slot = {2};
  std::vector<float> logits;
  try {
    runner.forward(plan, &logits);
    FAIL() << "a sequence on an empty LoRA slot ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("LoRA slot 2"), std::string::npos) << e.what();
  }
  plan.lora_slot = {-1, -1};
  EXPECT_THROW(runner.forward(plan, &logits), std::invalid_argument);  // not one per sequence
}

}  // namespace
}  // namespace ps
