#include "engine/spec_verifier.h"

#include <stdexcept>
#include <string>

namespace ps {

std::vector<VerifiedToken> sample_and_verify(RequestState& st, float* rows, int32_t vocab,
                                             std::span<const int32_t> draft) {
  std::vector<VerifiedToken> kept;
  for (size_t j = 0; j <= draft.size(); ++j) {
    // Built per row: the outputs and the suppressed ids (min_tokens) move with each kept token.
    SamplingContext ctx{&st.request.prompt_ids, &st.output_ids, &st.stop.suppressed_ids()};
    if (st.constraint) ctx.allowed_tokens = st.constraint->mask();
    VerifiedToken v;
    v.sample = Sampler::sample(rows + j * static_cast<size_t>(vocab), vocab, st.request.params, ctx,
                               st.rng);
    v.token = v.sample.token;
    v.was_draft = j < draft.size() && v.token == draft[j];
    if (st.constraint && !st.constraint->advance(v.token)) {
      v.grammar_rejected = true;
      kept.push_back(std::move(v));
      break;
    }
    st.output_ids.push_back(v.token);
    v.stop = st.stop.append(v.token);
    if (v.stop.reason == StopReason::kNone && st.constraint && st.constraint->finished()) {
      // The grammar is complete and nothing but EOS may follow: the request is done.
      v.stop.text += st.stop.finish_by_grammar().text;
      v.stop.reason = StopReason::kGrammar;
    }
    const bool ends = v.stop.reason != StopReason::kNone;
    const bool accepted = v.was_draft;
    kept.push_back(std::move(v));
    if (ends || !accepted) break;
  }
  return kept;
}

bool may_speculate(const Request& request) {
  return request.params.grammar == nullptr;
}

void check_speculative_config(const SpeculativeConfig& c) {
  if (c.num_speculative_tokens < 0 || c.num_speculative_tokens > 64) {
    throw std::invalid_argument("--num-speculative-tokens must be between 0 and 64, got " +
                                std::to_string(c.num_speculative_tokens));
  }
  if (!c.enabled()) return;
  if (c.ngram_min < 1) {
    throw std::invalid_argument("--ngram-min must be >= 1, got " + std::to_string(c.ngram_min));
  }
  if (c.ngram_max < c.ngram_min) {
    throw std::invalid_argument("--ngram-max (" + std::to_string(c.ngram_max) +
                                ") must be >= --ngram-min (" + std::to_string(c.ngram_min) + ")");
  }
  if (c.disable_by_batch_size < 0) {
    throw std::invalid_argument("--speculative-disable-by-batch-size must be >= 0, got " +
                                std::to_string(c.disable_by_batch_size));
  }
}

}  // namespace ps
