#pragma once
// `pagedserve bench offline`: one seeded workload run twice in one process — continuous
// batching (up to max_num_seqs at once) and single-request mode (one request at a time through
// an engine of the same configuration) — and the machine's own limits measured alongside.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/workload.h"
#include "engine/engine.h"

namespace ps {

using OfflineWorkload = Workload;

struct ModeResult {
  std::string mode;
  int32_t requests = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  double seconds = 0;
  double mean_ttft_s = 0;
  double mean_tpot_s = 0;  // (latency - ttft) / (output tokens - 1), averaged over requests
  int32_t max_seqs_in_step = 0;
  uint64_t steps = 0;
  // Shares of the engine's step time (DESIGN §7: scheduling must stay far below the model).
  double schedule_share = 0, forward_share = 0, sample_share = 0, emit_share = 0;
  std::string kernels;  // Engine::kernel_summary: the ISA and linear kernels this mode ran on
  // Speculative decoding (engine spec_decode counters; zero with speculation off).
  uint64_t spec_drafts = 0, spec_draft_tokens = 0, spec_accepted_tokens = 0;
  double forward_seconds = 0;          // the engine thread's time in model forwards
  int64_t weight_bytes = 0;            // held by the engine's runner
  int64_t weight_bytes_per_token = 0;  // read by one decode step
  // A side stream's requests (OfflineSideStream) and their prompt tokens; the fields above
  // count the workload alone.
  int64_t side_requests = 0, side_prompt_tokens = 0;
  // KV blocks held (EngineStats' per-step sums, in blocks of one layer): what the sequences
  // held, what they would have with every layer global, and the running sequences.
  uint64_t kv_layer_blocks_held = 0, kv_layer_blocks_unsplit = 0, kv_running_seqs = 0;
  int32_t num_layers = 0;
  bool sliding_pool = false;
  double total_tok_s() const { return (prompt_tokens + output_tokens) / seconds; }
  double output_tok_s() const { return output_tokens / seconds; }
};

// Several LoRA adapters in one run (issue #22): `load` puts them in the fresh engine, and request
// i runs with adapter mix[i % mix.size()].
struct OfflineLoraMix {
  std::function<void(Engine&)> load;
  std::vector<std::string> mix;
};

// Requests beside the workload (issue #36): one at a time, from the start until the workload's
// last request ends, each on a workload prompt with a first token of its own (no prefix-cache
// hits). `score`: max_tokens 0 with prompt_logprobs 0 (a
// prompt scored, every row's logits); otherwise the control, one generated token (the same
// prefill, one row's logits).
struct OfflineSideStream {
  bool score = true;
};

// Runs the workload with at most `concurrency` requests in flight (1 = single-request mode),
// greedy, ignore_eos, on a fresh engine (so neither mode warms the other's prefix cache).
ModeResult run_offline_mode(const std::string& name, const LoadedModel& model,
                            std::shared_ptr<const Tokenizer> tokenizer, EngineConfig config,
                            const OfflineWorkload& workload, int32_t concurrency,
                            const OfflineLoraMix* lora = nullptr,
                            const OfflineSideStream* side = nullptr);

}  // namespace ps
