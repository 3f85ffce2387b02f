#include "bench/offline_bench.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "bench/bench_clock.h"
#include "engine/lora_registry.h"

namespace ps {
namespace {

using Clock = BenchClock;

struct Timing {
  double ttft_s = 0, tpot_s = 0;
  int64_t tokens = 0;
  bool has_tpot = false;
};

}  // namespace

ModeResult run_offline_mode(const std::string& name, const LoadedModel& model,
                            std::shared_ptr<const Tokenizer> tokenizer, EngineConfig config,
                            const OfflineWorkload& workload, int32_t concurrency,
                            const OfflineLoraMix* lora, const OfflineSideStream* side) {
  Engine engine(model, std::move(tokenizer), config);
  if (lora != nullptr) lora->load(engine);
  ModeResult r;
  r.mode = name;
  r.kernels = engine.kernel_summary();
  r.weight_bytes = engine.stats().weight_bytes;
  r.weight_bytes_per_token = engine.stats().weight_bytes_per_token;
  const size_t n = workload.size();
  std::vector<Timing> timings(n);
  std::atomic<size_t> next{0};
  std::mutex error_mu;
  std::string error;

  // One blocking reader per in-flight request, as the HTTP server has. A single thread polling
  // every stream would spin on a core the engine's own threads need, and on a 2-core machine
  // that alone cost the continuous mode more than half its throughput.
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      Request req{workload.prompts[i], {}};
      req.params.temperature = 0;
      req.params.ignore_eos = true;
      req.params.max_tokens = workload.output_lens[i];
      if (lora != nullptr && !lora->mix.empty()) {
        const std::string& adapter = lora->mix[i % lora->mix.size()];
        req.lora = engine.loras()->acquire(adapter);
        if (!req.lora) {
          std::lock_guard<std::mutex> lock(error_mu);
          error = "bench: no LoRA adapter named '" + adapter + "' (--lora-mix)";
          next.store(n);
          return;
        }
      }
      const Clock::time_point start = Clock::now();
      SubmitResult s = engine.submit(std::move(req));
      if (auto* err = std::get_if<SubmitError>(&s)) {
        std::lock_guard<std::mutex> lock(error_mu);
        error = "bench request " + std::to_string(i) + ": " + err->message;
        next.store(n);
        return;
      }
      auto stream = std::move(std::get<std::unique_ptr<RequestStream>>(s));
      Timing& t = timings[i];
      Clock::time_point first;
      RequestOutput ev;
      while (!stream->finished()) {
        if (!stream->next(&ev, std::chrono::milliseconds(1000))) continue;
        if (t.tokens == 0 && !ev.token_ids.empty()) first = Clock::now();
        t.tokens += static_cast<int64_t>(ev.token_ids.size());
      }
      const Clock::time_point end = Clock::now();
      t.ttft_s = secs(start, first);
      if (t.tokens > 1) {
        t.tpot_s = secs(first, end) / static_cast<double>(t.tokens - 1);
        t.has_tpot = true;
      }
    }
  };

  // The side stream: its own thread, one request in flight, until the workload is done.
  std::atomic<bool> workload_done{false};
  const int32_t vocab = engine.model_config().vocab_size;
  auto side_worker = [&] {
    for (size_t k = 0; !workload_done.load(); ++k) {
      // A workload prompt under a first token of its own: the prefix cache serves neither
      // kind of side request, so both compute their whole prompt.
      std::vector<int32_t> prompt = workload.prompts[n - 1 - k % n];
      prompt[0] = 3 + static_cast<int32_t>(k % static_cast<size_t>(vocab - 3));
      Request req{std::move(prompt), {}};
      req.params.temperature = 0;
      req.params.max_tokens = side->score ? 0 : 1;
      req.params.prompt_logprobs = side->score ? 0 : -1;
      SubmitResult s = engine.submit(std::move(req));
      if (std::holds_alternative<SubmitError>(s)) return;
      auto stream = std::move(std::get<std::unique_ptr<RequestStream>>(s));
      RequestOutput ev;
      while (!stream->finished()) stream->next(&ev, std::chrono::milliseconds(1000));
      r.side_requests += 1;
      r.side_prompt_tokens += static_cast<int64_t>(workload.prompts[n - 1 - k % n].size());
    }
  };

  const Clock::time_point t0 = Clock::now();
  std::vector<std::thread> threads;
  const size_t workers = std::min(n, static_cast<size_t>(std::max(1, concurrency)));
  std::thread side_thread;
  if (side != nullptr && n > 0) side_thread = std::thread(side_worker);
  for (size_t k = 0; k < workers; ++k) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  r.seconds = secs(t0, Clock::now());
  workload_done.store(true);
  if (side_thread.joinable()) side_thread.join();
  if (!error.empty()) throw std::runtime_error(error);

  double ttft_sum = 0, tpot_sum = 0;
  int tpot_n = 0;
  for (const Timing& t : timings) {
    r.requests += 1;
    r.output_tokens += t.tokens;
    ttft_sum += t.ttft_s;
    if (t.has_tpot) {
      tpot_sum += t.tpot_s;
      ++tpot_n;
    }
  }
  r.prompt_tokens = workload.prompt_tokens();
  r.mean_ttft_s = r.requests ? ttft_sum / r.requests : 0;
  r.mean_tpot_s = tpot_n ? tpot_sum / tpot_n : 0;
  EngineStats s = engine.stats();
  r.max_seqs_in_step = s.max_seqs_in_step;
  r.kv_layer_blocks_held = s.kv_layer_blocks_held_sum;
  r.kv_layer_blocks_unsplit = s.kv_layer_blocks_unsplit_sum;
  r.kv_running_seqs = s.kv_running_seqs_sum;
  r.num_layers = engine.model_config().num_hidden_layers;
  r.sliding_pool = s.kv_sliding_blocks_total > 0;
  r.steps = s.steps_total;
  r.spec_drafts = s.spec_decode_num_drafts;
  r.spec_draft_tokens = s.spec_decode_num_draft_tokens;
  r.spec_accepted_tokens = s.spec_decode_num_accepted_tokens;
  r.forward_seconds = s.step_forward_seconds;
  const double step_total = s.step_schedule_seconds + s.step_forward_seconds +
                            s.step_sample_seconds + s.step_emit_seconds;
  if (step_total > 0) {
    r.schedule_share = s.step_schedule_seconds / step_total;
    r.forward_share = s.step_forward_seconds / step_total;
    r.sample_share = s.step_sample_seconds / step_total;
    r.emit_share = s.step_emit_seconds / step_total;
  }
  return r;
}

}  // namespace ps
