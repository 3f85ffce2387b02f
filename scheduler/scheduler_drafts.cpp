// Scheduler::schedule_drafts(): speculative decoding by n-gram prompt lookup (issue #21). Each
// decoding sequence that allows it gets up to num_speculative_tokens draft tokens after its
// last token; the model verifies them in the same packed forward and postprocess() keeps the
// accepted ones.
#include <algorithm>
#include <stdexcept>

#include "scheduler/ngram_proposer.h"
#include "scheduler/scheduler.h"

namespace ps {

void Scheduler::allow_speculation(SeqId id, int32_t max_total_tokens) {
  Sequence* seq = lookup(id);
  if (seq != nullptr) seq->speculation_limit_ = std::max(0, max_total_tokens);
}

// Runs after every committed token has its place in the step, so drafts only take budget and
// blocks nothing else wanted: a draft never delays a prefill, never preempts, never rejects.
void Scheduler::schedule_drafts(Step& step) {
  const SpeculativeConfig& sc = config_.speculative;
  const int32_t limit = sc.disable_by_batch_size;
  if (limit > 0 && static_cast<int32_t>(step.scheduled.size()) > limit) return;
  for (Sequence* seq : step.scheduled) {
    if (step.budget <= 0) break;
    // Decoding: the one uncomputed token (the last sampled one) is this step's whole chunk.
    if (seq->speculation_limit_ <= 0 || seq->scheduled_tokens_ != 1 ||
        seq->num_uncomputed_tokens() != 1) {
      continue;
    }
    const int32_t most = std::min(
        {sc.num_speculative_tokens, seq->speculation_limit_ - seq->num_tokens(), step.budget});
    if (most <= 0) continue;
    std::vector<int32_t> draft =
        propose_ngram_draft(seq->tokens(), NgramLookup{most, sc.ngram_max, sc.ngram_min});
    if (draft.empty()) continue;
    const int32_t room = kv_.max_slots(seq->id()) - seq->num_tokens();
    if (room < static_cast<int32_t>(draft.size())) draft.resize(std::max(0, room));
    if (draft.empty()) continue;
    const auto d = static_cast<int32_t>(draft.size());
    if (!kv_.append_slots(seq->id(), seq->num_tokens() + d)) {
      throw std::logic_error("Scheduler: blocks counted available for a draft could not be taken");
    }
    seq->draft_ = std::move(draft);
    seq->scheduled_tokens_ += d;
    step.budget -= d;
  }
}

}  // namespace ps
