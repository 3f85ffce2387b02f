#pragma once
// The engine thread and everything it owns (docs/architecture.md §1): scheduler, model runner (with
// the KV cache), per-request sampling state. Other threads only push commands into the inbox and
// read stats; nothing else touches the state, so there are no locks inside the step.
#include <concurrentqueue/blockingconcurrentqueue.h>
#include <atomic>

#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <variant>

#include "engine/engine.h"
#include "engine/histogram.h"
#include "engine/lora_registry.h"
#include "engine/request_state.h"
#include "model/executor.h"
#include "scheduler/scheduler.h"

namespace ps {

class EngineCore : public std::enable_shared_from_this<EngineCore> {
 public:
  EngineCore(LoadedModel model, std::shared_ptr<const Tokenizer> tokenizer, EngineConfig config);
  ~EngineCore();

  void start();
  SubmitResult submit(Request request);
  void cancel(RequestId id);
  EngineStats stats() const;
  const std::string& kernel_summary() const;
  int64_t shutdown(std::chrono::milliseconds drain);
  void set_paused(bool paused);
  std::optional<Engine::CacheSnapshot> cache_snapshot(std::chrono::milliseconds timeout);

  const ModelConfig& model_config() const { return model_.config; }
  const std::shared_ptr<const Tokenizer>& tokenizer() const { return tokenizer_; }
  int32_t max_model_len() const { return max_model_len_; }
  const std::shared_ptr<LoraRegistry>& loras() const { return loras_; }

 private:
  // LongRoPE models: sets rope_context_len from --max-model-len before the executor is built.
  void pick_longrope_factors();

  struct AddCommand {
    RequestId id;
    Request request;
    std::shared_ptr<StreamState> stream;
  };
  struct CancelCommand {
    RequestId id;
  };
  struct AbortAllCommand {};
  struct PauseCommand {
    bool paused;
  };
  struct SnapshotCommand {
    std::shared_ptr<std::promise<Engine::CacheSnapshot>> reply;
  };
  using Command =
      std::variant<AddCommand, CancelCommand, AbortAllCommand, SnapshotCommand, PauseCommand>;

  void loop();
  void stop_accepting();
  bool drain_inbox(bool block);  // false when asked to stop
  void step();
  // Finishes requests past Request::queue_deadline (never scheduled) or Request::deadline.
  void expire_deadlines();
  void sample_and_emit(const StepPlan& plan, std::vector<float>& logits);
  // Prompt logprobs from the plan's prompt rows, whose logits start at row `first_row`.
  void score_prompts(const StepPlan& plan, std::vector<float>& logits, size_t first_row);
  void finish(RequestId id, FinishReason reason, std::string detail, std::string final_text);
  void publish_stats();
  // Hands the block manager's events since the last call to config_.kv_events as one batch.
  void publish_kv_events();
  SeqAdapter install_adapter(const Request& request);

  LoadedModel model_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  EngineConfig config_;
  int32_t num_blocks_ = 0;
  int32_t sliding_layers_ = 0;  // layers whose K/V is in the sliding pool, when there is one
  int32_t max_model_len_ = 0;

  // Engine-thread state.
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<Executor> runner_;  // CPU ModelRunner or the CUDA executor
  std::unordered_map<RequestId, std::unique_ptr<RequestState>> requests_;
  std::vector<float> logits_;
  std::shared_ptr<const std::vector<std::string>> token_bytes_;
  std::shared_ptr<const std::vector<bool>> token_special_;
  std::shared_ptr<LoraRegistry> loras_;
  std::vector<uint64_t> slot_identity_;  // which load each runner LoRA slot holds (0: none)
  std::unordered_map<uint64_t, int64_t> lora_of_root_;  // prefix-chain root -> its load's id
  const char* kv_medium_ = "CPU";
  bool paused_ = false;  // Engine::pause(): the loop takes commands but runs no step
  int64_t next_event_seq_ = 0;

  moodycamel::BlockingConcurrentQueue<Command> inbox_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> accepting_{true};
  std::mutex submit_mu_;  // orders submit()'s enqueue against stop_accepting()
  std::atomic<int64_t> next_id_{1};
  std::atomic<int64_t> outstanding_{0};  // submitted and not yet finished

  // Published once per step for other threads.
  mutable std::mutex stats_mu_;
  EngineStats stats_;
  Histogram ttft_{Histogram::latency_buckets()};
  Histogram itl_{Histogram::latency_buckets()};
  Histogram e2e_{Histogram::latency_buckets()};
  Histogram queue_{Histogram::latency_buckets()};
};

}  // namespace ps
