#include "scheduler/scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ps {

Scheduler::Scheduler(SchedulerConfig config)
    : config_(std::move(config)),
      kv_(KvPoolsConfig{config_.num_blocks, config_.num_sliding_blocks, config_.sliding_window,
                        config_.block_size, config_.enable_prefix_caching, config_.block_hasher}),
      states_(config_.num_state_slots),
      snapshots_(config_.num_state_slots > 0 && config_.enable_prefix_caching &&
                         config_.state_snapshot_interval > 0
                     ? config_.num_state_snapshots
                     : 0,
                 config_.state_snapshot_interval / std::max(1, config_.block_size)) {
  if (config_.state_snapshot_interval < 0 || config_.num_state_snapshots < 0 ||
      config_.state_snapshot_interval % std::max(1, config_.block_size) != 0) {
    throw std::invalid_argument("Scheduler: the state snapshot interval (" +
                                std::to_string(config_.state_snapshot_interval) +
                                ") must be a multiple of the block size");
  }
  if (config_.max_num_seqs <= 0 || config_.max_batched_tokens <= 0) {
    throw std::invalid_argument("Scheduler needs max_num_seqs > 0 and max_batched_tokens > 0");
  }
}

void Scheduler::add(SeqId id, std::vector<int32_t> prompt_ids, SeqAdapter adapter,
                    int32_t priority) {
  if (seqs_.count(id)) {
    throw std::invalid_argument("Scheduler::add: sequence id " + std::to_string(id) +
                                " is already in use");
  }
  auto seq = std::make_unique<Sequence>(id, std::move(prompt_ids), &kv_.full(), adapter);
  if (!fits_pool(*seq)) {
    rejected_.push_back(id);
    return;
  }
  Sequence* s = seq.get();
  s->priority_ = priority;
  s->arrival_ = next_arrival_++;
  seqs_.emplace(id, std::move(seq));
  enqueue_waiting(s, /*preempted=*/false);
}

bool Scheduler::ranks_before(const Sequence& a, const Sequence& b) {
  if (a.priority_ != b.priority_) return a.priority_ < b.priority_;
  return a.arrival_ < b.arrival_;
}

void Scheduler::enqueue_waiting(Sequence* seq, bool preempted) {
  if (config_.policy == SchedulingPolicy::kFcfs) {
    seq->queue_pos_ = waiting_.insert(preempted ? waiting_.begin() : waiting_.end(), seq);
    return;
  }
  auto at = std::find_if(waiting_.begin(), waiting_.end(),
                         [&](const Sequence* w) { return ranks_before(*seq, *w); });
  seq->queue_pos_ = waiting_.insert(at, seq);
}

Sequence* Scheduler::victim() const {
  if (running_.empty()) throw std::logic_error("Scheduler: nothing running to preempt");
  if (config_.policy == SchedulingPolicy::kFcfs) return running_.back();
  Sequence* worst = running_.front();
  for (Sequence* s : running_) {
    if (ranks_before(*worst, *s)) worst = s;
  }
  return worst;
}

void Scheduler::want_prompt_logits(SeqId id) {
  Sequence* seq = lookup(id);
  if (seq != nullptr) seq->prompt_logits_ = true;
}

StepPlan Scheduler::schedule() {
  Step step;
  step.budget = config_.max_batched_tokens;
  schedule_decodes(step);
  schedule_running_prefills(step);
  // A step that had to preempt is short of blocks: admitting now would only preempt again.
  if (step.preempted.empty()) admit_waiting(step);
  // Drafts come last: they only use what the committed tokens left of the budget and the pool.
  if (step.preempted.empty() && config_.speculative.enabled()) schedule_drafts(step);
  plan_snapshots(step);
  return build_plan(step);
}

// Every running sequence with one token left (its last sampled token) gets it first, oldest
// first, so decoding latency does not depend on prefill load.
void Scheduler::schedule_decodes(Step& step) {
  // A copy: preemption removes sequences from running_ as we go. A preempted one is waiting
  // again and skipped (under kFcfs every sequence after a preempted one was preempted first).
  const std::vector<Sequence*> order(running_.begin(), running_.end());
  for (Sequence* seq : order) {
    if (seq->status() != SeqStatus::kRunning || seq->num_uncomputed_tokens() != 1) continue;
    if (step.budget == 0) break;
    if (!reserve_or_preempt(step, seq, seq->num_tokens())) continue;
    add_to_step(step, seq, 1);
  }
}

// Running sequences still in their prompt continue it with what budget is left, oldest first.
// A chunk shrinks to the blocks the pool can give; only when not one token fits is the newest
// running sequence preempted.
void Scheduler::schedule_running_prefills(Step& step) {
  const std::vector<Sequence*> order(running_.begin(), running_.end());  // as in decodes
  for (Sequence* seq : order) {
    if (seq->status() != SeqStatus::kRunning || seq->scheduled_tokens_ > 0 ||
        seq->num_uncomputed_tokens() < 2) {
      continue;
    }
    if (step.budget == 0 || static_cast<int32_t>(step.scheduled.size()) >= config_.max_num_seqs) {
      break;
    }
    const int32_t want = std::min(seq->num_uncomputed_tokens(), step.budget);
    int32_t room = 0;
    bool self_preempted = false;
    while (true) {
      room = kv_.max_slots(seq->id()) - seq->num_computed_tokens();
      if (room > 0) break;
      Sequence* v = victim();
      self_preempted = v == seq;
      preempt(step, v);
      if (self_preempted) break;
    }
    if (self_preempted) continue;
    const int32_t n = std::min(want, room);
    if (!kv_.append_slots(seq->id(), seq->num_computed_tokens() + n)) {
      throw std::logic_error("Scheduler: blocks counted available could not be taken");
    }
    add_to_step(step, seq, n);
  }
}

// Waiting sequences enter in queue order. One that does not fit stops admission: later ones
// never skip ahead, so a long prompt cannot be starved by a stream of short ones. Under
// kPriority the front may first preempt running sequences of strictly lower priority for a
// seat or for blocks.
void Scheduler::admit_waiting(Step& step) {
  while (!waiting_.empty()) {
    Sequence* seq = waiting_.front();
    // No budget, step row or seat left: only a lower-priority sequence's can be had.
    if (step.budget == 0 || static_cast<int32_t>(step.scheduled.size()) >= config_.max_num_seqs ||
        num_running() >= config_.max_num_seqs) {
      if (!preempt_lower(step, *seq)) break;
      continue;
    }
    if (!fits_pool(*seq)) {
      // Only a preempted sequence can grow past the pool; prompts are checked in add().
      reject(seq);
      continue;
    }
    // A recurrent model runs only with a state slot free.
    const bool recurrent = states_.num_slots() > 0;
    if (recurrent && states_.num_free() == 0) {
      if (!preempt_lower(step, *seq)) break;
      continue;
    }
    const uint64_t root = seq->adapter().prefix_root;
    // A sequence that wants its prompt rows' logits computes every row; a recurrent one reuses
    // a prefix only as far as a held state snapshot reaches.
    int32_t snapshot = -1;
    const KvMatch match = seq->prompt_logits() ? kv_.no_match(root)
                          : recurrent          ? match_with_state(*seq, root, &snapshot)
                                               : kv_.match_prefix(seq->tokens(), root);
    const int32_t n = std::min(seq->num_tokens() - match.num_tokens(), step.budget);
    const int32_t slots = match.num_tokens() + n;
    if (!kv_.can_allocate(match, slots)) {
      if (!preempt_lower(step, *seq)) break;
      continue;
    }
    kv_.allocate(seq->id(), match, slots);
    if (recurrent) states_.acquire(seq->id());  // free -> in use
    if (snapshot >= 0) step.restores.push_back({seq, match.num_tokens(), snapshot});
    waiting_.pop_front();
    seq->admit(match.num_tokens());  // waiting -> running
    seq->queue_pos_ = running_.insert(running_.end(), seq);
    add_to_step(step, seq, n);
  }
}

bool Scheduler::reserve_or_preempt(Step& step, Sequence* seq, int32_t num_slots) {
  while (!kv_.append_slots(seq->id(), num_slots)) {
    Sequence* v = victim();
    preempt(step, v);
    if (v == seq) return false;
  }
  return true;
}

bool Scheduler::preempt_lower(Step& step, const Sequence& seq) {
  if (config_.policy != SchedulingPolicy::kPriority || running_.empty()) return false;
  Sequence* v = victim();
  if (v->priority_ <= seq.priority_) return false;
  preempt(step, v);
  return true;
}

// running -> waiting (kFcfs: the front). Its published blocks stay cached, so re-admission may
// find them.
void Scheduler::preempt(Step& step, Sequence* victim) {
  running_.erase(victim->queue_pos_);
  if (victim->scheduled_tokens_ > 0) {
    step.budget += victim->scheduled_tokens_;
    std::erase(step.scheduled, victim);
  }
  kv_.free(victim->id());
  states_.release(victim->id());  // the state is recomputed from the tokens on re-admission
  victim->preempt();
  enqueue_waiting(victim, /*preempted=*/true);
  step.preempted.push_back(victim->id());
  ++num_preemptions_;
}

void Scheduler::add_to_step(Step& step, Sequence* seq, int32_t num_tokens) {
  if (num_tokens <= 0 || num_tokens > step.budget || seq->scheduled_tokens_ != 0) {
    throw std::logic_error("Scheduler: bad chunk of " + std::to_string(num_tokens) +
                           " tokens for sequence " + std::to_string(seq->id()));
  }
  seq->scheduled_tokens_ = num_tokens;
  step.budget -= num_tokens;
  step.scheduled.push_back(seq);
}

bool Scheduler::fits_pool(const Sequence& seq) const {
  return kv_.full().blocks_for_tokens(seq.num_tokens()) <= kv_.full().num_blocks();
}

void Scheduler::reject(Sequence* seq) {
  // waiting -> finished, without ever holding blocks.
  waiting_.erase(seq->queue_pos_);
  seq->finish();
  rejected_.push_back(seq->id());
  seqs_.erase(seq->id());
}

void Scheduler::postprocess(const StepPlan& plan, const std::vector<int32_t>& sampled) {
  if (sampled.size() != plan.sample_indices.size()) {
    throw std::invalid_argument("Scheduler::postprocess: " + std::to_string(sampled.size()) +
                                " sampled tokens for " +
                                std::to_string(plan.sample_indices.size()) + " sampling rows");
  }
  std::vector<std::vector<int32_t>> verified;
  verified.reserve(sampled.size());
  for (int32_t token : sampled) verified.push_back({token});
  postprocess_verified(plan, verified);
}

void Scheduler::postprocess_verified(const StepPlan& plan,
                                     const std::vector<std::vector<int32_t>>& verified) {
  if (verified.size() != plan.sample_indices.size()) {
    throw std::invalid_argument("Scheduler::postprocess: " + std::to_string(verified.size()) +
                                " sampled tokens for " +
                                std::to_string(plan.sample_indices.size()) + " sampling rows");
  }
  std::vector<int32_t> sample_of(static_cast<size_t>(plan.num_seqs()), -1);
  for (size_t i = 0; i < plan.sample_indices.size(); ++i) {
    sample_of.at(plan.sample_indices[i]) = static_cast<int32_t>(i);
  }
  for (int32_t s = 0; s < plan.num_seqs(); ++s) {
    Sequence* seq = lookup(plan.seq_ids[s]);
    if (seq == nullptr) continue;  // finished (aborted) after schedule()
    const int32_t n = plan.query_start[s + 1] - plan.query_start[s];
    const int32_t i = sample_of[s];
    const int32_t drafts = i < 0 ? 0 : plan.drafts_of(i);
    if (n != seq->scheduled_tokens_ || drafts != static_cast<int32_t>(seq->draft_.size())) {
      throw std::logic_error("Scheduler::postprocess: plan does not match the last schedule()");
    }
    seq->scheduled_tokens_ = 0;
    seq->advance(n - drafts);
    if (i >= 0) {
      seq->accept(verified[i]);
      // Slots past the accepted tokens held rejected drafts: give back the blocks they emptied.
      if (drafts > 0) kv_.truncate(seq->id(), seq->num_computed_tokens());
    }
    kv_.publish(seq->id(), seq->tokens(), seq->num_computed_tokens());
    // After publishing: a released sliding block stays findable in its pool's prefix cache.
    kv_.release_outside_window(seq->id(), seq->num_computed_tokens());
  }
  settle_snapshots();  // after publishing: a snapshot's key is its boundary block's serial
}

void Scheduler::finish(SeqId id) {
  Sequence* seq = lookup(id);
  if (seq == nullptr) return;
  (seq->status() == SeqStatus::kRunning ? running_ : waiting_).erase(seq->queue_pos_);
  kv_.free(id);
  states_.release(id);
  seq->finish();  // waiting|running -> finished
  seqs_.erase(id);
}

std::vector<SeqId> Scheduler::take_rejected() {
  return std::exchange(rejected_, {});
}

const Sequence* Scheduler::find(SeqId id) const {
  return lookup(id);
}

Sequence* Scheduler::lookup(SeqId id) const {
  auto it = seqs_.find(id);
  return it == seqs_.end() ? nullptr : it->second.get();
}

std::vector<SeqId> Scheduler::running_ids() const {
  std::vector<SeqId> ids;
  for (const Sequence* s : running_) ids.push_back(s->id());
  return ids;
}

std::vector<SeqId> Scheduler::waiting_ids() const {
  std::vector<SeqId> ids;
  for (const Sequence* s : waiting_) ids.push_back(s->id());
  return ids;
}

}  // namespace ps
