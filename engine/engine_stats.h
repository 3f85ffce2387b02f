#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ps {

// Cumulative histogram snapshot in seconds; bucket i counts observations <= bounds[i].
struct HistogramSnapshot {
  std::vector<double> bounds;
  std::vector<uint64_t> counts;  // same size as bounds, cumulative
  uint64_t count = 0;            // all observations (the +Inf bucket)
  double sum = 0.0;
};

// A thread-safe snapshot of what the engine is doing (for /metrics and tests).
struct EngineStats {
  int32_t running = 0;
  int32_t waiting = 0;
  int32_t kv_blocks_total = 0;
  int32_t kv_blocks_active = 0;  // ref count >= 1
  int32_t kv_blocks_cached = 0;  // ref count 0, kept for prefix hits
  int32_t kv_blocks_free = 0;
  // The sliding-window layers' own pool (kvcache/kv_pools.h); all 0 when the model has none.
  int32_t kv_sliding_blocks_total = 0;
  int32_t kv_sliding_blocks_active = 0;
  int32_t kv_sliding_blocks_cached = 0;
  int32_t kv_sliding_blocks_free = 0;
  // A hybrid model's recurrent-state slots (kvcache/state_slots.h); 0 when it has none.
  int32_t state_slots_total = 0;
  int32_t state_slots_in_use = 0;
  // Their snapshots for prefix hits (kvcache/state_snapshots.h): how many, how many hold a state.
  int32_t state_snapshots_total = 0;
  int32_t state_snapshots_held = 0;
  // Summed over steps, in blocks of one layer: the K/V blocks running sequences held, and what
  // they would have held with every layer keeping its whole context (one pool). Their ratio is
  // what window release saves (1 without a sliding pool).
  uint64_t kv_layer_blocks_held_sum = 0;
  uint64_t kv_layer_blocks_unsplit_sum = 0;
  uint64_t kv_running_seqs_sum = 0;  // running sequences, summed over the same steps
  bool kv_integrity_ok = true;
  uint64_t prefix_cache_queries = 0;  // prompt tokens looked up
  uint64_t prefix_cache_hits = 0;     // prompt tokens found
  uint64_t prompt_tokens_total = 0;
  uint64_t generation_tokens_total = 0;
  uint64_t preemptions_total = 0;
  uint64_t steps_total = 0;
  uint64_t requests_finished_total = 0;
  uint64_t requests_aborted_total = 0;
  // Requests refused at their queue deadline (never scheduled), and those stopped at their
  // total deadline (Request::queue_deadline, Request::deadline).
  uint64_t requests_queue_timeout_total = 0;
  uint64_t requests_deadline_total = 0;
  // KV-cache events (--kv-events-config): batches handed to the publisher, and those it
  // dropped because its queue was full.
  uint64_t kv_events_batches_total = 0;
  uint64_t kv_events_dropped_total = 0;
  int32_t max_seqs_in_step = 0;  // the most sequences one step has run
  // Speculative decoding (vLLM's spec_decode counters): sequence-steps that carried a draft,
  // draft tokens verified, and those accepted (the sampled token equalled the draft).
  uint64_t spec_decode_num_drafts = 0;
  uint64_t spec_decode_num_draft_tokens = 0;
  uint64_t spec_decode_num_accepted_tokens = 0;
  // Wall time the engine thread spent in each phase of its steps, summed (seconds): scheduling
  // and block bookkeeping, the model forward, sampling, and postprocess + stop checks + events.
  double step_schedule_seconds = 0;
  double step_forward_seconds = 0;
  double step_sample_seconds = 0;
  double step_emit_seconds = 0;
  HistogramSnapshot time_to_first_token;
  HistogramSnapshot inter_token_latency;
  HistogramSnapshot e2e_latency;
  HistogramSnapshot queue_time;
  // What the model runs on (ModelRunner::kernel_summary): set once at start.
  std::string kernels;
  int64_t weight_bytes = 0;            // held by the runner (model_runner.h)
  int64_t weight_bytes_per_token = 0;  // of them, read by one decode step
};

}  // namespace ps
