// One engine step (EngineCore, engine_core.h): schedule, forward, then sample (verifying drafts)
// and emit each request's tokens as stream events, with the step's timings and latency
// histograms. Split from engine_core.cpp, which holds the engine thread's life (construction,
// submission, the inbox loop, finishing, stats and shutdown).

#include <algorithm>

#include "engine/engine_core.h"
#include "engine/spec_verifier.h"
#include "sampling/sampler.h"

namespace ps {
namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

FinishReason finish_reason_of(StopReason reason) {
  switch (reason) {
    case StopReason::kMaxTokens:
    case StopReason::kContextLength:
      return FinishReason::kLength;
    default:
      return FinishReason::kStop;
  }
}

}  // namespace

// Before a step, so a request past its deadline never takes another step's blocks or compute.
void EngineCore::expire_deadlines() {
  const Clock::time_point now = config_.deadline_clock ? config_.deadline_clock() : Clock::now();
  std::vector<RequestId> refused, stopped;
  for (const auto& [id, st] : requests_) {
    const Request& r = st->request;
    if (!st->scheduled_once) {
      if (now >= r.queue_deadline || now >= r.deadline) refused.push_back(id);
    } else if (now >= r.deadline) {
      stopped.push_back(id);
    }
  }
  for (RequestId id : refused) {
    finish(id, FinishReason::kQueueTimeout, "the request waited past its queue deadline", "");
  }
  for (RequestId id : stopped) {
    StopResult r = requests_.at(id)->stop.finish_by_deadline();
    finish(id, FinishReason::kLength, kDeadlineDetail, std::move(r.text));
  }
}

void EngineCore::step() {
  expire_deadlines();
  if (!scheduler_->has_unfinished()) {
    publish_stats();
    return;
  }
  const Clock::time_point t_schedule = Clock::now();
  StepPlan plan = scheduler_->schedule();
  for (SeqId id : scheduler_->take_rejected()) {
    finish(id, FinishReason::kError,
           "the request needs more KV-cache blocks than the whole cache holds", "");
  }
  if (plan.empty()) {
    publish_kv_events();
    publish_stats();
    return;
  }
  const Clock::time_point now = Clock::now();
  for (SeqId id : plan.seq_ids) {
    auto it = requests_.find(id);
    if (it == requests_.end() || it->second->scheduled_once) continue;
    it->second->scheduled_once = true;
    it->second->first_scheduled = now;
    std::lock_guard<std::mutex> lock(stats_mu_);
    queue_.observe(seconds_between(it->second->arrival, now));
  }
  const Clock::time_point t_forward = Clock::now();
  runner_->forward(plan, &logits_);
  {
    // Counted before the events go out, so a reader that saw its finish event sees this step.
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.steps_total += 1;
    stats_.max_seqs_in_step = std::max(stats_.max_seqs_in_step, plan.num_seqs());
    stats_.step_schedule_seconds += seconds_between(t_schedule, t_forward);
    stats_.step_forward_seconds += seconds_between(t_forward, Clock::now());
  }
  sample_and_emit(plan, logits_);
  if (config_.check_integrity_every_step) scheduler_->kv_pools().check_integrity();
  publish_kv_events();
  publish_stats();
}

void EngineCore::sample_and_emit(const StepPlan& plan, std::vector<float>& logits) {
  const int32_t vocab = model_.config.vocab_size;
  const Clock::time_point t_sample = Clock::now();
  // Per sample index, the tokens the step keeps: one, or with a draft up to 1 + its length
  // (spec_verifier.h); logits hold 1 + drafts rows per sample index, in order.
  std::vector<std::vector<VerifiedToken>> kept(plan.sample_indices.size());
  std::vector<std::vector<int32_t>> verified(plan.sample_indices.size());
  size_t row = 0;
  uint64_t drafts = 0, draft_tokens = 0, accepted_tokens = 0;
  for (size_t i = 0; i < plan.sample_indices.size(); ++i) {
    const int32_t s = plan.sample_indices[i];
    RequestState& st = *requests_.at(plan.seq_ids[s]);
    const int32_t d = plan.drafts_of(i);
    if (st.request.params.max_tokens == 0) {
      row += 1 + static_cast<size_t>(d);  // it scores its prompt only: nothing to sample
      continue;
    }
    const std::span<const int32_t> draft(plan.token_ids.data() + plan.query_start[s + 1] - d,
                                         static_cast<size_t>(d));
    kept[i] = sample_and_verify(st, logits.data() + row * vocab, vocab, draft);
    row += 1 + static_cast<size_t>(d);
    for (const VerifiedToken& v : kept[i]) {
      verified[i].push_back(v.token);
      accepted_tokens += v.was_draft ? 1 : 0;
    }
    drafts += d > 0 ? 1 : 0;
    draft_tokens += static_cast<uint64_t>(d);
  }
  score_prompts(plan, logits, row);
  // A request that only scores its prompt (max_tokens 0) ends once the prompt is computed,
  // before the scheduler would append a token to it.
  for (size_t i = 0; i < plan.sample_indices.size(); ++i) {
    const RequestId id = plan.seq_ids[plan.sample_indices[i]];
    auto it = requests_.find(id);
    if (it != requests_.end() && it->second->request.params.max_tokens == 0) {
      finish(id, FinishReason::kLength, "", "");
    }
  }
  const Clock::time_point t_emit = Clock::now();
  scheduler_->postprocess_verified(plan, verified);

  const Clock::time_point now = Clock::now();
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i].empty()) continue;  // a request that ended above
    const RequestId id = plan.seq_ids[plan.sample_indices[i]];
    RequestState& st = *requests_.at(id);
    // sample_and_verify already appended the kept tokens to output_ids.
    const size_t rejected = !kept[i].empty() && kept[i].back().grammar_rejected ? 1 : 0;
    size_t index = st.output_ids.size() - (kept[i].size() - rejected);
    for (VerifiedToken& v : kept[i]) {
      const int32_t token = v.token;
      if (v.grammar_rejected) {
        // Only a grammar no token can continue gets here (the mask had no token to offer).
        finish(id, FinishReason::kError, "the grammar allows no token at this point", "");
        break;
      }
      ++index;
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        if (index == 1) {
          ttft_.observe(seconds_between(st.arrival, now));
        } else {
          itl_.observe(seconds_between(st.last_token, now));
        }
        stats_.generation_tokens_total += 1;
      }
      st.last_token = now;

      StopResult& r = v.stop;
      RequestOutput ev;
      ev.text = std::move(r.text);
      ev.token_ids = {token};
      if (st.request.params.logprobs >= 0) {
        ev.logprobs.push_back(TokenLogprob{token, v.sample.logprob, std::move(v.sample.top)});
      }
      if (index == 1) {
        ev.prompt_logprobs = std::move(st.prompt_logprobs);
        st.prompt_logprobs_sent = true;
      }
      const Sequence* seq = scheduler_->find(id);
      ev.prompt_tokens = static_cast<int32_t>(st.request.prompt_ids.size());
      ev.cached_tokens = seq ? seq->num_cached_prompt_tokens() : 0;
      ev.completion_tokens = static_cast<int32_t>(index);
      if (r.reason == StopReason::kNone) {
        st.stream->push(std::move(ev));
        continue;
      }
      ev.finish = finish_reason_of(r.reason);
      ev.finish_detail = r.matched_stop;
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        e2e_.observe(seconds_between(st.arrival, now));
        stats_.requests_finished_total += 1;
      }
      st.stream->push(std::move(ev));
      scheduler_->finish(id);
      requests_.erase(id);
      outstanding_.fetch_sub(1);
      break;  // sample_and_verify keeps nothing after a token that ends the request
    }
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.spec_decode_num_drafts += drafts;
  stats_.spec_decode_num_draft_tokens += draft_tokens;
  stats_.spec_decode_num_accepted_tokens += accepted_tokens;
  stats_.step_sample_seconds += seconds_between(t_sample, t_emit);
  stats_.step_emit_seconds += seconds_between(t_emit, Clock::now());
}
}  // namespace ps
