// The engine thread's life (EngineCore, engine_core.h): construction, submission, the inbox
// loop, finishing requests, LoRA slots and shutdown. One step (schedule, forward, sample,
// emit) is engine_step.cpp's.
#include "engine/engine_core.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "engine/lora_registry.h"
#include "engine/spec_verifier.h"
#include "executor/executor_factory.h"
#include "kernels/openmp_pool.h"
#include "model/model_weights.h"
#include "sampling/sampler.h"

namespace ps {
namespace {

// The detokenizer indexes token tables by id; a checkpoint may have more embedding rows than the
// tokenizer has tokens (padded vocab), and such ids decode to nothing rather than out of range.
template <typename T>
std::shared_ptr<const std::vector<T>> padded(std::shared_ptr<const std::vector<T>> table,
                                             size_t size, T fill) {
  if (table->size() >= size) return table;
  auto copy = std::make_shared<std::vector<T>>(*table);
  copy->resize(size, fill);
  return copy;
}

}  // namespace

void EngineCore::pick_longrope_factors() {
  const ModelConfig& mc = model_.config;
  if (mc.rope_scaling.type != RopeType::longrope) return;
  // LongRoPE's factors follow the context served (model/rope_scaling.h says why): the executor
  // builds its tables from the weights' config, so that copy (tensors shared) learns it too.
  const int32_t served = config_.max_model_len > 0
                             ? std::min(config_.max_model_len, mc.max_context_len())
                             : mc.max_context_len();
  auto weights = std::make_shared<ModelWeights>(*model_.weights);
  weights->config.rope_context_len = served;
  model_.config.rope_context_len = served;
  model_.weights = std::move(weights);
  const int32_t original =
      mc.rope_scaling.original_max_position_embeddings.value_or(mc.max_position_embeddings);
  std::fprintf(stderr, "pagedserve: LongRoPE uses its %s factors (context %d, pretrained %d)\n",
               uses_long_rope_factors(mc) ? "long" : "short", served, original);
}

EngineCore::EngineCore(LoadedModel model, std::shared_ptr<const Tokenizer> tokenizer,
                       EngineConfig config)
    : model_(std::move(model)), tokenizer_(std::move(tokenizer)), config_(config) {
  const ModelConfig& mc = model_.config;
  if (config_.block_size <= 0) throw std::invalid_argument("--block-size must be >= 1");
  if (config_.max_num_seqs <= 0) throw std::invalid_argument("--max-num-seqs must be >= 1");
  if (config_.max_batched_tokens <= 0) {
    throw std::invalid_argument("--max-batched-tokens must be >= 1");
  }
  check_speculative_config(config_.speculative);
  if (mc.num_linear_layers() > 0 && config_.speculative.enabled()) {
    // A rejected draft would have to roll the recurrent state back, which is not kept.
    throw std::invalid_argument(
        "--speculative ngram is not supported for models with linear-attention layers (" +
        mc.model_type + ")");
  }
  pick_longrope_factors();
  // The executor first: on CUDA it sizes the KV cache from the GPU's memory.
  ExecutorRequest er;
  er.device = config_.device;
  er.runner = config_.runner;
  er.block_size = config_.block_size;
  er.num_blocks = config_.num_blocks;
  er.cpu_kv_cache_memory = config_.kv_cache_memory;
  er.max_batched_tokens = config_.max_batched_tokens;
  er.max_num_seqs = config_.max_num_seqs;
  er.max_loras = config_.max_loras;
  er.sliding_pool = config_.hybrid_kv_cache;
  if (config_.state_snapshot_interval % config_.block_size != 0) {
    throw std::invalid_argument("--state-snapshot-interval must be a multiple of --block-size");
  }
  er.max_state_snapshots = config_.enable_prefix_caching && config_.state_snapshot_interval > 0
                               ? config_.max_state_snapshots
                               : 0;
  BuiltExecutor built = make_executor(model_.weights, er);
  if (!built.note.empty()) std::fprintf(stderr, "pagedserve: %s\n", built.note.c_str());
  runner_ = std::move(built.executor);
  kv_medium_ = built.device == Device::cpu ? "CPU" : "GPU";
  num_blocks_ = built.kv.num_blocks;
  // A sequence can never be longer than the whole pool, nor than the model's positions.
  max_model_len_ = config_.max_model_len > 0 ? config_.max_model_len : mc.max_context_len();
  max_model_len_ = std::min(max_model_len_, mc.max_context_len());
  max_model_len_ = std::min(max_model_len_, num_blocks_ * config_.block_size);

  SchedulerConfig sc;
  sc.num_blocks = num_blocks_;
  sc.num_sliding_blocks = built.kv.num_sliding_blocks;
  sc.sliding_window = mc.sliding_window;
  for (int32_t l = 0; l < mc.num_hidden_layers; ++l) sliding_layers_ += mc.layer_is_sliding(l);
  sc.block_size = config_.block_size;
  sc.max_num_seqs = config_.max_num_seqs;
  sc.num_state_slots = built.kv.num_state_slots;
  sc.num_state_snapshots = built.kv.num_state_snapshots;
  sc.state_snapshot_interval = config_.state_snapshot_interval;
  if (sc.num_state_slots > 0 && sc.num_state_slots < sc.max_num_seqs) {
    std::fprintf(stderr,
                 "pagedserve: --max-num-seqs %d lowered to %d: the recurrent state pool holds %d "
                 "sequences (raise --kv-cache-memory for more)\n",
                 sc.max_num_seqs, sc.num_state_slots, sc.num_state_slots);
    sc.max_num_seqs = sc.num_state_slots;
  }
  sc.max_batched_tokens = config_.max_batched_tokens;
  sc.enable_prefix_caching = config_.enable_prefix_caching;
  sc.speculative = config_.speculative;
  sc.policy = config_.scheduling_policy;
  scheduler_ = std::make_unique<Scheduler>(sc);
  if (config_.kv_events) scheduler_->record_block_events(true);
  stats_.kernels = runner_->kernel_summary();
  stats_.weight_bytes = runner_->weight_bytes();
  stats_.weight_bytes_per_token = runner_->weight_bytes_per_token();
  loras_ = std::make_shared<LoraRegistry>(config_.max_loras);
  slot_identity_.assign(size_t(std::max(0, config_.max_loras)), 0);

  token_bytes_ =
      padded(tokenizer_->bytes_table(), static_cast<size_t>(mc.vocab_size), std::string());
  token_special_ = padded(tokenizer_->special_table(), static_cast<size_t>(mc.vocab_size), false);
  publish_stats();
}

const std::string& EngineCore::kernel_summary() const {
  return runner_->kernel_summary();
}

EngineCore::~EngineCore() {
  stop_accepting();
  stop_ = true;
  inbox_.enqueue(AbortAllCommand{});
  if (thread_.joinable()) thread_.join();
}

void EngineCore::start() {
  // The runner was built (weights packed, kernels tuned) on this thread: its OpenMP pool goes,
  // so the engine thread's is the only one and its workers spin between regions instead of
  // sleeping (kernels/openmp_pool.h).
  release_this_threads_openmp_pool();
  thread_ = std::thread([this] { loop(); });
}

void EngineCore::stop_accepting() {
  std::lock_guard<std::mutex> lock(submit_mu_);
  accepting_ = false;
}

SubmitResult EngineCore::submit(Request request) {
  const int32_t vocab = model_.config.vocab_size;
  if (!accepting_) {
    return SubmitError{SubmitError::Kind::kShuttingDown, "the server is shutting down", ""};
  }
  std::string param;
  std::string message = validate(request.params, vocab, &param);
  if (!message.empty()) return SubmitError{SubmitError::Kind::kInvalid, message, param};
  if (request.prompt_ids.empty()) {
    return SubmitError{SubmitError::Kind::kInvalid, "the prompt is empty", "prompt"};
  }
  if (request.priority != 0 && config_.scheduling_policy != SchedulingPolicy::kPriority) {
    return SubmitError{SubmitError::Kind::kInvalid,
                       "'priority' is " + std::to_string(request.priority) +
                           ", but this server schedules first come, first served; start it "
                           "with --scheduling-policy priority to use priorities",
                       "priority"};
  }
  if (request.lora && request.lora->slot() >= config_.max_loras) {
    return SubmitError{SubmitError::Kind::kInvalid, "the LoRA adapter is not this engine's",
                       "model"};
  }
  for (int32_t id : request.prompt_ids) {
    if (id < 0 || id >= vocab) {
      return SubmitError{SubmitError::Kind::kInvalid,
                         "prompt token id " + std::to_string(id) +
                             " is outside the vocabulary [0, " + std::to_string(vocab) + ")",
                         "prompt"};
    }
  }
  const int64_t prompt_len = static_cast<int64_t>(request.prompt_ids.size());
  if (prompt_len + request.params.max_tokens > max_model_len_) {
    return SubmitError{SubmitError::Kind::kInvalid,
                       "This model's maximum context length is " + std::to_string(max_model_len_) +
                           " tokens. However, you requested " +
                           std::to_string(prompt_len + request.params.max_tokens) + " tokens (" +
                           std::to_string(prompt_len) + " in the prompt, " +
                           std::to_string(request.params.max_tokens) +
                           " for the completion). Shorten the prompt or lower max_tokens.",
                       "max_tokens"};
  }
  const int64_t limit = int64_t{config_.max_num_seqs} + config_.max_queued_requests;
  if (outstanding_.fetch_add(1) >= limit) {
    outstanding_.fetch_sub(1);
    return SubmitError{
        SubmitError::Kind::kQueueFull,
        "too many requests in flight (limit " + std::to_string(limit) + "); retry later", ""};
  }
  RequestId id = next_id_.fetch_add(1);
  auto stream = std::make_shared<StreamState>(id);
  {
    // Checked again under the lock that stop_accepting() takes, so no request can enter the
    // inbox after the engine thread's final drain (it would never get its finish event).
    std::lock_guard<std::mutex> lock(submit_mu_);
    if (!accepting_) {
      outstanding_.fetch_sub(1);
      return SubmitError{SubmitError::Kind::kShuttingDown, "the server is shutting down", ""};
    }
    inbox_.enqueue(AddCommand{id, std::move(request), stream});
  }
  return std::make_unique<RequestStream>(stream, weak_from_this());
}

void EngineCore::cancel(RequestId id) {
  inbox_.enqueue(CancelCommand{id});
}

void EngineCore::loop() {
  while (!stop_) {
    if (!drain_inbox(paused_ || !scheduler_->has_unfinished())) break;
    if (stop_) break;
    if (!paused_ && scheduler_->has_unfinished()) step();
  }
  // Whatever is left ends with exactly one finish event: requests the engine had taken in, and
  // requests still in the inbox (submitted just before the stop, never seen by a step).
  std::vector<RequestId> left;
  for (auto& [id, state] : requests_) left.push_back(id);
  for (RequestId id : left) finish(id, FinishReason::kAbort, "engine stopped", "");
  Command cmd;
  while (inbox_.try_dequeue(cmd)) {
    auto* add = std::get_if<AddCommand>(&cmd);
    if (!add) continue;
    RequestOutput ev;
    ev.finish = FinishReason::kAbort;
    ev.finish_detail = "engine stopped";
    ev.prompt_tokens = static_cast<int32_t>(add->request.prompt_ids.size());
    add->stream->push(std::move(ev));
    outstanding_.fetch_sub(1);
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.requests_aborted_total += 1;
    stats_.requests_finished_total += 1;
  }
  publish_stats();
}

bool EngineCore::drain_inbox(bool block) {
  Command cmd;
  bool got = block ? inbox_.wait_dequeue_timed(cmd, std::chrono::milliseconds(50))
                   : inbox_.try_dequeue(cmd);
  // Adds and cancels change what /metrics reports even when no step follows (an idle engine).
  const bool changed = got;
  while (got) {
    if (auto* add = std::get_if<AddCommand>(&cmd)) {
      const auto& p = add->request.params;
      StopChecker checker(p, model_.config.eos_token_ids,
                          static_cast<int32_t>(add->request.prompt_ids.size()), max_model_len_,
                          token_bytes_, token_special_);
      scheduler_->add(add->id, add->request.prompt_ids, install_adapter(add->request),
                      add->request.priority);
      if (p.prompt_logprobs >= 0) scheduler_->want_prompt_logits(add->id);
      if (config_.speculative.enabled() && may_speculate(add->request)) {
        scheduler_->allow_speculation(
            add->id, static_cast<int32_t>(add->request.prompt_ids.size()) + p.max_tokens);
      }
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        stats_.prompt_tokens_total += add->request.prompt_ids.size();
      }
      auto state =
          std::make_unique<RequestState>(std::move(add->request), add->stream, std::move(checker));
      if (const auto& grammar = state->request.params.grammar) {
        state->constraint = std::make_unique<ConstrainedRow>(grammar, model_.config.vocab_size);
      }
      requests_.emplace(add->id, std::move(state));
    } else if (auto* snap = std::get_if<SnapshotCommand>(&cmd)) {
      // Events recorded so far go out first, so the snapshot's seq covers everything it shows.
      publish_kv_events();
      snap->reply->set_value(
          Engine::CacheSnapshot{scheduler_->block_manager().published_keys(), next_event_seq_ - 1});
    } else if (auto* pause = std::get_if<PauseCommand>(&cmd)) {
      paused_ = pause->paused;
    } else if (auto* cancel = std::get_if<CancelCommand>(&cmd)) {
      if (requests_.count(cancel->id)) finish(cancel->id, FinishReason::kAbort, "cancelled", "");
    } else {
      std::vector<RequestId> all;
      for (auto& [id, state] : requests_) all.push_back(id);
      for (RequestId id : all) finish(id, FinishReason::kAbort, "aborted", "");
      if (stop_) return false;
    }
    got = inbox_.try_dequeue(cmd);
  }
  if (changed) publish_stats();
  return true;
}

void EngineCore::finish(RequestId id, FinishReason reason, std::string detail,
                        std::string final_text) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  RequestState& st = *it->second;
  const bool by_deadline = reason == FinishReason::kLength && detail == kDeadlineDetail;
  RequestOutput ev;
  ev.text = std::move(final_text);
  ev.finish = reason;
  ev.finish_detail = std::move(detail);
  ev.prompt_tokens = static_cast<int32_t>(st.request.prompt_ids.size());
  if (const Sequence* seq = scheduler_->find(id))
    ev.cached_tokens = seq->num_cached_prompt_tokens();
  ev.completion_tokens = static_cast<int32_t>(st.output_ids.size());
  // A request that ends before its first token (max_tokens 0 scores the prompt) carries its
  // prompt logprobs on this, its only event.
  if (!st.prompt_logprobs_sent) ev.prompt_logprobs = std::move(st.prompt_logprobs);
  {
    // Counted before the event goes out, so a reader that saw its finish event sees it counted.
    std::lock_guard<std::mutex> lock(stats_mu_);
    if (reason == FinishReason::kAbort) stats_.requests_aborted_total += 1;
    if (reason == FinishReason::kQueueTimeout) stats_.requests_queue_timeout_total += 1;
    if (by_deadline) stats_.requests_deadline_total += 1;
    stats_.requests_finished_total += 1;
  }
  st.stream->push(std::move(ev));
  scheduler_->finish(id);
  requests_.erase(it);
  outstanding_.fetch_sub(1);
}

// The runner slot of the request's adapter gets its factors if it holds another load: a slot
// changes hands only after every request of the previous adapter has ended (lora_registry.h).
SeqAdapter EngineCore::install_adapter(const Request& request) {
  if (!request.lora) return {};
  const LoraLease& lease = *request.lora;
  const size_t slot = size_t(lease.slot());
  if (slot >= slot_identity_.size()) throw std::logic_error("LoRA lease of another engine");
  if (slot_identity_[slot] != lease.identity()) {
    runner_->set_lora_adapter(lease.slot(), lease.adapter());
    slot_identity_[slot] = lease.identity();
  }
  // The base keeps kRootBlockKey; each load gets its own root (an odd multiplier is a bijection,
  // so no identity maps back to the base's).
  const uint64_t root = kRootBlockKey ^ (lease.identity() * 0x9e3779b97f4a7c15ULL);
  lora_of_root_[root] = static_cast<int64_t>(lease.identity());
  return SeqAdapter{lease.slot(), root};
}

void EngineCore::set_paused(bool paused) {
  inbox_.enqueue(PauseCommand{paused});
}

int64_t EngineCore::shutdown(std::chrono::milliseconds drain) {
  stop_accepting();
  set_paused(false);  // a paused engine would let the drain run out with nothing finished
  const auto deadline = Clock::now() + drain;
  while (outstanding_.load() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Read before the abort: what is still outstanding now is what the abort ends.
  const int64_t cut = outstanding_.load();
  stop_ = true;
  inbox_.enqueue(AbortAllCommand{});
  if (thread_.joinable()) thread_.join();
  return cut;
}

}  // namespace ps
