#pragma once
// The public C++ API of the engine (docs/architecture.md §1). One engine thread owns all mutable
// state; callers only submit requests, cancel them, and read their events.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "checkpoint/loader.h"
#include "cpu/model_runner.h"
#include "engine/engine_stats.h"
#include "engine/kv_event_sink.h"
#include "engine/request.h"
#include "executor/device_select.h"
#include "scheduler/scheduling_policy.h"
#include "scheduler/speculative_config.h"
#include "tokenizer/tokenizer.h"

namespace ps {

struct EngineConfig {
  int32_t block_size = 16;
  int32_t num_blocks = 0;                 // 0: derive from kv_cache_memory
  int64_t kv_cache_memory = 512ll << 20;  // bytes of K+V cache
  int32_t max_num_seqs = 64;
  int32_t max_batched_tokens = 2048;
  bool enable_prefix_caching = true;
  // Sliding-window layers keep their K/V in a pool of their own, given back as the window
  // passes (kvcache/kv_pools.h); false: one pool (--disable-hybrid-kv-cache-manager).
  bool hybrid_kv_cache = true;
  // Models with linear-attention layers (kvcache/state_snapshots.h): their state is kept every
  // this many prompt tokens (a multiple of block_size; 0: never, so no prefix is reused), in at
  // most max_state_snapshots snapshots (-1: as many as a quarter of kv_cache_memory holds, at
  // most 64). --state-snapshot-interval, --max-state-snapshots.
  int32_t state_snapshot_interval = 256;
  int32_t max_state_snapshots = -1;
  int32_t max_model_len = 0;  // 0: the model's max_context_len()
  int32_t max_queued_requests = 4096;
  bool check_integrity_every_step = false;  // tests turn this on
  RunnerOptions runner;                     // --kernel (model_runner.h)
  DeviceOptions device;                     // --device, --gpu-memory-utilization
  SpeculativeConfig speculative;            // --speculative ngram (off by default)
  int32_t max_loras = 0;                    // --max-loras: LoRA adapters resident at once
  SchedulingPolicy scheduling_policy = SchedulingPolicy::kFcfs;  // --scheduling-policy
  // What Request deadlines are compared with (empty: steady_clock::now). Tests move time
  // forward with it, so a deadline test never races the machine's speed.
  std::function<std::chrono::steady_clock::time_point()> deadline_clock;
  // --kv-events-config: receives the prefix cache's events, one batch per step that changed it
  // (kv_event_sink.h). Null: none are recorded.
  std::shared_ptr<KvEventSink> kv_events;
};

class EngineCore;
class LoraRegistry;
struct StreamState;

// The reader of one request's events. Destroying it before the finish event cancels the
// request (so a handler that returns early never leaks a sequence).
class RequestStream {
 public:
  RequestStream(std::shared_ptr<StreamState> state, std::weak_ptr<EngineCore> core);
  ~RequestStream();
  RequestStream(const RequestStream&) = delete;
  RequestStream& operator=(const RequestStream&) = delete;

  RequestId id() const;
  // Waits up to `timeout` for the next event. Returns false on timeout. After the finish event
  // has been returned, returns false at once.
  bool next(RequestOutput* out, std::chrono::milliseconds timeout);
  void cancel();
  bool finished() const;  // the finish event has been read

 private:
  std::shared_ptr<StreamState> state_;
  std::weak_ptr<EngineCore> core_;
  bool finish_seen_ = false;
};

using SubmitResult = std::variant<std::unique_ptr<RequestStream>, SubmitError>;

class Engine {
 public:
  Engine(LoadedModel model, std::shared_ptr<const Tokenizer> tokenizer, EngineConfig config);
  ~Engine();  // aborts what is left and joins the engine thread
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates (sampling params, prompt + max_tokens vs context length, queue size) and
  // enqueues. Never blocks on the engine thread.
  SubmitResult submit(Request request);
  void cancel(RequestId id);
  EngineStats stats() const;

  const ModelConfig& model_config() const;
  const Tokenizer& tokenizer() const;
  std::shared_ptr<const Tokenizer> tokenizer_ptr() const;
  int32_t max_model_len() const;
  // The CPU kernels the model runs on (ISA, linear kernel per shape): printed at start, in
  // /metrics and in bench offline.
  const std::string& kernel_summary() const;
  // The LoRA adapters this engine serves (engine/lora_registry.h); never null.
  const std::shared_ptr<LoraRegistry>& loras() const;

  // What the prefix cache holds, read on the engine thread between steps: every block key
  // (once per block) and the seq of the last KV-event batch handed out before it (-1: none).
  // Nullopt when the engine does not answer within `timeout` (stopped, or a very long step).
  struct CacheSnapshot {
    std::vector<uint64_t> block_hashes;
    int64_t last_event_seq = -1;
  };
  std::optional<CacheSnapshot> cache_snapshot(std::chrono::milliseconds timeout) const;

  // Stops stepping at the next step boundary while keeping every request, running or newly
  // submitted (vLLM's pause_generation); resume() goes on from where it stopped. Both are
  // commands in the engine's inbox, so what is submitted between them is all in the scheduler
  // before the first step after resume(): a test lines up a batch this way without racing the
  // engine thread. shutdown() resumes first, so a paused engine still drains.
  void pause();
  void resume();

  // Stops accepting; lets running requests finish for up to `drain`, then aborts the rest.
  // Returns how many it aborted (0 when all finished in time), so the server can say so.
  int64_t shutdown(std::chrono::milliseconds drain);

 private:
  std::shared_ptr<EngineCore> core_;
};

}  // namespace ps
