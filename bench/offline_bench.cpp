#include "bench/offline_bench.h"

#include <chrono>
#include <deque>
#include <random>
#include <stdexcept>
#include <thread>

namespace ps {
namespace {

using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct InFlight {
  std::unique_ptr<RequestStream> stream;
  Clock::time_point start, first_token;
  int64_t tokens = 0;
};

}  // namespace

OfflineWorkload random_workload(int32_t num_prompts, int32_t input_len, int32_t output_len,
                                int32_t vocab_size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Ids below 3 are the tiny model's special tokens; keep prompts to ordinary text tokens.
  std::uniform_int_distribution<int32_t> id(3, vocab_size - 1);
  OfflineWorkload w;
  for (int32_t i = 0; i < num_prompts; ++i) {
    std::vector<int32_t> p(input_len);
    for (auto& t : p) t = id(rng);
    w.prompts.push_back(std::move(p));
    w.output_lens.push_back(output_len);
  }
  return w;
}

ModeResult run_offline_mode(const std::string& name, const LoadedModel& model,
                            std::shared_ptr<const Tokenizer> tokenizer, EngineConfig config,
                            const OfflineWorkload& workload, int32_t concurrency) {
  Engine engine(model, std::move(tokenizer), config);
  ModeResult r;
  r.mode = name;
  auto submit = [&](size_t i) {
    Request req{workload.prompts[i], {}};
    req.params.temperature = 0;
    req.params.ignore_eos = true;
    req.params.max_tokens = workload.output_lens[i];
    SubmitResult s = engine.submit(std::move(req));
    if (auto* err = std::get_if<SubmitError>(&s)) {
      throw std::runtime_error("bench request " + std::to_string(i) + ": " + err->message);
    }
    return InFlight{std::move(std::get<std::unique_ptr<RequestStream>>(s)), Clock::now(), {}, 0};
  };

  const Clock::time_point t0 = Clock::now();
  std::deque<InFlight> running;
  size_t next = 0;
  double ttft_sum = 0, tpot_sum = 0;
  int tpot_n = 0;
  while (next < workload.prompts.size() || !running.empty()) {
    while (next < workload.prompts.size() && static_cast<int32_t>(running.size()) < concurrency) {
      running.push_back(submit(next++));
    }
    bool progressed = false;
    for (auto it = running.begin(); it != running.end();) {
      RequestOutput ev;
      bool done = false;
      while (it->stream->next(&ev, std::chrono::milliseconds(0))) {
        progressed = true;
        if (it->tokens == 0 && !ev.token_ids.empty()) it->first_token = Clock::now();
        it->tokens += static_cast<int64_t>(ev.token_ids.size());
        if (ev.finish) {
          done = true;
          break;
        }
      }
      if (!done) {
        ++it;
        continue;
      }
      const Clock::time_point end = Clock::now();
      r.requests += 1;
      r.output_tokens += it->tokens;
      ttft_sum += secs(it->start, it->first_token);
      if (it->tokens > 1) {
        tpot_sum += secs(it->first_token, end) / static_cast<double>(it->tokens - 1);
        ++tpot_n;
      }
      it = running.erase(it);
    }
    if (!progressed) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  r.seconds = secs(t0, Clock::now());
  for (const auto& p : workload.prompts) r.prompt_tokens += static_cast<int64_t>(p.size());
  r.mean_ttft_s = r.requests ? ttft_sum / r.requests : 0;
  r.mean_tpot_s = tpot_n ? tpot_sum / tpot_n : 0;
  EngineStats s = engine.stats();
  r.max_seqs_in_step = s.max_seqs_in_step;
  r.steps = s.steps_total;
  return r;
}

}  // namespace ps
