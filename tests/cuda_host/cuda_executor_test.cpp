// The CUDA executor through make_executor (executor/executor_factory.h). Without a GPU (CI): asking
// for it fails at start with a message naming --device, from the factory and from the engine.
// With one (scripts/device-check.sh): it matches the CPU runner's logits on the same plans
// within bf16 tolerance, and sizes its KV cache as asked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/loader.h"
#include "cpu/model_runner.h"
#include "engine/engine.h"
#include "executor/executor_factory.h"
#include "tests/engine/test_model.h"

namespace ps {
namespace {

bool have_gpu() {
  const CudaAvailability a = probe_cuda();
  return a.built_with_cuda && a.device_count > 0;
}

ModelConfig cuda_config(const std::string& type) {
  ModelConfig c = testing_util::small_config(type);
  c.head_dim = 64;  // what the CUDA attention kernel takes
  c.hidden_size = 128;
  return c;
}

ExecutorRequest cuda_request(int32_t num_blocks, int32_t block_size) {
  ExecutorRequest r;
  r.device.device = Device::cuda;
  r.num_blocks = num_blocks;
  r.block_size = block_size;
  r.max_batched_tokens = 256;
  r.max_num_seqs = 8;
  r.runner = RunnerOptions{LinearMode::packed, 0.0, "off"};  // a CPU fallback tunes nothing
  return r;
}

// Sequences with fixed, disjoint block ranges: sequence s owns blocks [s * per_seq, ...).
struct Planner {
  int32_t block_size, per_seq;
  std::vector<std::vector<int32_t>> tokens;  // what each sequence has in the cache, or will
  std::vector<int32_t> cached;               // how many of them are in the cache

  StepPlan step(const std::vector<std::vector<int32_t>>& new_tokens) {
    StepPlan p;
    p.max_blocks_per_seq = per_seq;
    p.query_start.push_back(0);
    for (size_t s = 0; s < new_tokens.size(); ++s) {
      p.seq_ids.push_back(SeqId(s));
      for (int32_t t : new_tokens[s]) {
        const int32_t pos = cached[s]++;
        tokens[s].push_back(t);
        p.token_ids.push_back(t);
        p.positions.push_back(pos);
        p.slot_mapping.push_back((int32_t(s) * per_seq + pos / block_size) * block_size +
                                 pos % block_size);
      }
      p.query_start.push_back(p.num_tokens());
      p.context_len.push_back(cached[s]);
      for (int32_t b = 0; b < per_seq; ++b) {
        const bool used = b * block_size < cached[s];
        p.block_tables.push_back(used ? int32_t(s) * per_seq + b : -1);
      }
      p.sample_indices.push_back(int32_t(s));
    }
    return p;
  }
};

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b, size_t from, size_t n,
                   float* scale) {
  float d = 0;
  *scale = 1.0f;
  for (size_t i = from; i < from + n; ++i) {
    d = std::max(d, std::fabs(a[i] - b[i]));
    *scale = std::max(*scale, std::fabs(b[i]));
  }
  return d;
}

TEST(CudaExecutor, WithoutAGpuItFailsAtStartNamingTheFlag) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is here: the other tests run it";
  LoadedModel model = random_model(cuda_config("qwen3"), 3);
  try {
    make_executor(model.weights, cuda_request(16, 16));
    FAIL() << "make_executor(cuda) should throw without a GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--device cuda: ", 0), 0u) << e.what();
  }
  // auto serves on the CPU instead, and says why.
  ExecutorRequest r = cuda_request(16, 16);
  r.device.device = Device::auto_select;
  BuiltExecutor built = make_executor(model.weights, r);
  EXPECT_EQ(built.device, Device::cpu);
  EXPECT_EQ(built.kv.num_blocks, 16);
  EXPECT_EQ(built.note.rfind("--device auto chose cpu: ", 0), 0u) << built.note;
  EXPECT_EQ(built.executor->kernel_summary().rfind("kernel isa ", 0), 0u);
}

TEST(CudaExecutor, TheEngineRefusesCudaWithoutAGpu) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is here";
  EngineConfig config;
  config.device.device = Device::cuda;
  config.num_blocks = 16;
  try {
    Engine engine(random_model(cuda_config("qwen3"), 3), testing_util::small_tokenizer(), config);
    FAIL() << "the engine should not start on --device cuda without a GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--device cuda: "), std::string::npos) << e.what();
  }
}

TEST(CudaExecutor, CpuSizingIsUnchanged) {
  LoadedModel model = random_model(cuda_config("qwen3"), 3);
  ExecutorRequest r;
  r.device.device = Device::cpu;
  r.runner = RunnerOptions{LinearMode::packed, 0.0, "off"};
  r.block_size = 8;
  r.cpu_kv_cache_memory = 10 * ModelRunner::kv_bytes_per_block(model.config, 8) + 5;
  EXPECT_EQ(make_executor(model.weights, r).kv.num_blocks, 10);
  r.num_blocks = 3;
  EXPECT_EQ(make_executor(model.weights, r).kv.num_blocks, 3);
}

class CudaExecutorOnGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA GPU here (scripts/device-check.sh runs this)";
  }
};

TEST_P(CudaExecutorOnGpu, MatchesTheCpuRunnerOnPrefillAndDecode) {
  LoadedModel model = random_model(cuda_config(GetParam()), 5);
  const int32_t V = model.config.vocab_size, block = 16, per_seq = 8;
  BuiltExecutor gpu = make_executor(model.weights, cuda_request(4 * per_seq, block));
  ASSERT_EQ(gpu.device, Device::cuda);
  EXPECT_EQ(gpu.kv.num_blocks, 4 * per_seq);
  EXPECT_EQ(gpu.executor->kernel_summary().rfind("cuda ", 0), 0u);
  ModelRunner cpu(model.weights, KvCacheSpec{4 * per_seq, block},
                  RunnerOptions{LinearMode::packed, 0.0, "off"});
  Planner pg{block, per_seq, std::vector<std::vector<int32_t>>(3), {0, 0, 0}};
  Planner pc = pg;
  std::vector<std::vector<int32_t>> next = {
      {1, 2, 3, 4, 5}, {7}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 17, 18, 19, 20, 21, 22, 23, 24, 25}};
  for (int step = 0; step < 6; ++step) {
    std::vector<float> lg, lc;
    gpu.executor->forward(pg.step(next), &lg);
    cpu.forward(pc.step(next), &lc);
    ASSERT_EQ(lg.size(), lc.size());
    for (size_t s = 0; s < 3; ++s) {
      float scale = 1;
      const float d = max_abs_diff(lg, lc, s * size_t(V), size_t(V), &scale);
      EXPECT_LE(d, 2e-2f * scale) << GetParam() << " step " << step << " seq " << s;
      // Both continue with the CPU's greedy token, so the two caches hold the same sequence.
      next[s] = {int32_t(std::max_element(lc.begin() + long(s) * V, lc.begin() + long(s + 1) * V) -
                         (lc.begin() + long(s) * V))};
    }
  }
}

TEST_P(CudaExecutorOnGpu, SizesItsCacheFromTheFlags) {
  LoadedModel model = random_model(cuda_config(GetParam()), 5);
  ExecutorRequest r = cuda_request(0, 16);
  r.device.kv_cache_memory = 64ll << 20;
  BuiltExecutor b = make_executor(model.weights, r);
  const int64_t per_block = 2 * model.config.num_hidden_layers * 16 * model.config.kv_size() * 2;
  EXPECT_EQ(b.kv.num_blocks, (64ll << 20) / per_block);
  EXPECT_NE(b.note.find("--kv-cache-memory"), std::string::npos) << b.note;
  r.device.kv_cache_memory = 0;
  r.device.gpu_memory_utilization = 0.5;
  b = make_executor(model.weights, r);
  EXPECT_GT(b.kv.num_blocks, 1000);
  EXPECT_NE(b.note.find("--gpu-memory-utilization 0.50"), std::string::npos) << b.note;
}

TEST_P(CudaExecutorOnGpu, DecodeGraphsMatchEagerSteps) {
  // Three sequences decode in bucket 4 (one padding row); the first decode step of the bucket
  // runs eagerly and captures, the later ones replay the graph.
  LoadedModel model = random_model(cuda_config(GetParam()), 9);
  const int32_t V = model.config.vocab_size, block = 16, per_seq = 8;
  ExecutorRequest with = cuda_request(4 * per_seq, block), without = with;
  without.device.cuda_graphs = false;
  BuiltExecutor g = make_executor(model.weights, with), e = make_executor(model.weights, without);
  EXPECT_NE(g.executor->kernel_summary().find("CUDA graphs"), std::string::npos);
  EXPECT_NE(e.executor->kernel_summary().find("eager steps"), std::string::npos);
  Planner pg{block, per_seq, std::vector<std::vector<int32_t>>(3), {0, 0, 0}};
  Planner pe = pg;
  std::vector<std::vector<int32_t>> next = {{1, 2, 3}, {4, 5}, {6, 7, 8, 9}};
  for (int step = 0; step < 5; ++step) {
    std::vector<float> lg, le;
    g.executor->forward(pg.step(next), &lg);
    e.executor->forward(pe.step(next), &le);
    ASSERT_EQ(lg.size(), size_t(3) * size_t(V));
    ASSERT_EQ(lg.size(), le.size());
    for (size_t s = 0; s < 3; ++s) {
      float scale = 1;
      const float d = max_abs_diff(lg, le, s * size_t(V), size_t(V), &scale);
      EXPECT_LE(d, 2e-2f * scale) << GetParam() << " step " << step << " seq " << s;
      next[s] = {int32_t(std::max_element(le.begin() + long(s) * V, le.begin() + long(s + 1) * V) -
                         (le.begin() + long(s) * V))};
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Architectures, CudaExecutorOnGpu,
                         ::testing::Values("qwen3", "qwen2", "llama"));

}  // namespace
}  // namespace ps
