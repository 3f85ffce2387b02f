// The cost of serving LoRA adapters unmerged (issue #22): one decode step of B sequences with
// `context` cached tokens each on the default tiny model shape (ModelConfig{}: hidden 512,
// 8 layers, intermediate 1408, vocab 6400), all on the base vs split round-robin over 4
// adapters that adapt every projection (q, k, v, o, gate, up, down) at rank r. The two plans
// alternate on one runner, step by step, and the minimum over the rounds counts, so a busy
// shared machine slows both alike instead of whichever ran second. Prints the ratio of step
// times (= the throughput ratio of the mix to the base at that batch).
//
//   OMP_NUM_THREADS=1 build/bench/bench_model_lora [ROUNDS=60]   (CPU time: robust when shared)
//   build/bench/bench_model_lora [ROUNDS]                       (all cores, wall time)
#include <ATen/ATen.h>

#include <ATen/Parallel.h>
#include <time.h>
#include <algorithm>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/random_weights.h"
#include "cpu/lora_factors.h"
#include "cpu/model_runner.h"
#include "kernels/kernel_isa.h"
#include "model/model_weights.h"
#include "torch_bridge/torch_tensor.h"

namespace {

constexpr int32_t kBlockSize = 16;

ps::StepPlan make_plan(int32_t B, int32_t cached, int32_t fresh, int32_t vocab) {
  ps::StepPlan p;
  const int32_t ctx = cached + fresh;
  p.max_blocks_per_seq = (ctx + kBlockSize - 1) / kBlockSize;
  p.query_start.push_back(0);
  for (int32_t b = 0; b < B; ++b) {
    p.seq_ids.push_back(b);
    for (int32_t i = 0; i < p.max_blocks_per_seq; ++i) {
      p.block_tables.push_back(b * p.max_blocks_per_seq + i);
    }
    for (int32_t pos = cached; pos < ctx; ++pos) {
      p.token_ids.push_back((pos * 31 + b * 7) % vocab);
      p.positions.push_back(pos);
      p.slot_mapping.push_back((b * p.max_blocks_per_seq + pos / kBlockSize) * kBlockSize +
                               pos % kBlockSize);
    }
    p.query_start.push_back(p.query_start.back() + fresh);
    p.context_len.push_back(ctx);
    p.sample_indices.push_back(b);
  }
  return p;
}

std::shared_ptr<const ps::LoraAdapter> random_adapter(const ps::ModelConfig& c, int64_t r) {
  std::vector<ps::LoraFactors> modules;
  const int64_t h = c.hidden_size, q = c.q_size(), kv = c.kv_size(), i = c.intermediate_size;
  const std::vector<std::tuple<std::string, int64_t, int64_t>> shapes = {
      {"self_attn.q_proj", q, h}, {"self_attn.k_proj", kv, h}, {"self_attn.v_proj", kv, h},
      {"self_attn.o_proj", h, q}, {"mlp.gate_proj", i, h},     {"mlp.up_proj", i, h},
      {"mlp.down_proj", h, i}};
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    for (const auto& [name, out, in] : shapes) {
      ps::LoraFactors f;
      f.hf_name = "model.layers." + std::to_string(l) + "." + name + ".weight";
      f.a = ps::from_torch(at::randn({r, in}) * 0.02);
      f.b = ps::from_torch(at::randn({out, r}) * 0.02);
      modules.push_back(f);
    }
  }
  return ps::pack_lora_adapter(c, modules, 2.0, {});
}

// With one thread (OMP_NUM_THREADS=1) the step's CPU time: on a machine shared with other busy
// processes wall time mostly measures them, while the calling thread's CPU time is the step's
// own work. With more threads, wall time (the other threads' CPU is not the caller's).
double seconds_of(ps::ModelRunner& runner, const ps::StepPlan& plan, std::vector<float>* logits) {
  const bool cpu = at::get_num_threads() == 1;
  timespec a{}, b{};
  const auto t0 = std::chrono::steady_clock::now();
  if (cpu) clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  runner.forward(plan, logits);
  if (cpu) {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    return double(b.tv_sec - a.tv_sec) + 1e-9 * double(b.tv_nsec - a.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 60;
  const ps::ModelConfig c;
  auto weights = std::make_shared<const ps::ModelWeights>(ps::make_random_weights(c, 0));
  std::printf("kernel ISA %s; tiny model shape (hidden %d, %d layers); %d alternating rounds; %s\n",
              ps::kernel_isa_name(ps::active_kernel_isa()), c.hidden_size, c.num_hidden_layers,
              rounds, at::get_num_threads() == 1 ? "1 thread, thread CPU time" : "wall time");
  std::printf("%6s %6s %5s %12s %12s %8s\n", "batch", "ctx", "rank", "base ms", "4-mix ms",
              "mix/base tput");
  for (const int32_t B : {16, 64}) {
    for (const int64_t rank : {8, 16, 64}) {
      const int32_t context = 128;
      ps::ModelRunner runner(weights, {B * (context / kBlockSize + 1), kBlockSize});
      for (int32_t s = 0; s < 4; ++s) runner.set_lora_adapter(s, random_adapter(c, rank));
      std::vector<float> logits;
      runner.forward(make_plan(B, 0, context, c.vocab_size), &logits);  // fill the cache
      const ps::StepPlan base = make_plan(B, context, 1, c.vocab_size);
      ps::StepPlan mix = base;
      mix.lora_slot.resize(size_t(B));
      for (int32_t b = 0; b < B; ++b) mix.lora_slot[size_t(b)] = b % 4;
      double best_base = 1e9, best_mix = 1e9;
      for (int i = 0; i < rounds; ++i) {
        best_base = std::min(best_base, seconds_of(runner, base, &logits));
        best_mix = std::min(best_mix, seconds_of(runner, mix, &logits));
      }
      std::printf("%6d %6d %5lld %12.3f %12.3f %7.2fx\n", B, context, static_cast<long long>(rank),
                  best_base * 1e3, best_mix * 1e3, best_base / best_mix);
      std::fflush(stdout);
    }
  }
  return 0;
}
