#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "structured/grammar_matcher.h"

namespace ps {

// One constrained sequence in the engine: its own matcher and the mask of its next token, laid
// out over the model's vocabulary (which may have more rows than the tokenizer: those ids
// are never allowed). The engine thread calls mask() before sampling the row and advance()
// with the sampled token; preemption does not touch it (the matcher state belongs to the
// request, and recompute re-reads the same output tokens, so there is nothing to replay).
class ConstrainedRow {
 public:
  ConstrainedRow(std::shared_ptr<const CompiledGrammar> grammar, int32_t model_vocab);

  // Bit t of word t/32 set = token t allowed. Computed once per token (cached until advance).
  const uint32_t* mask();
  // False when the grammar rejects `token` (then the state is unchanged).
  bool advance(int32_t token);
  // Nothing but EOS can follow: the request is done.
  bool finished() const { return matcher_.is_finished(); }
  const GrammarMatcher& matcher() const { return matcher_; }
  // Time spent building masks, for the engine's metrics and the benchmark.
  double mask_seconds() const { return mask_seconds_; }

 private:
  GrammarMatcher matcher_;
  int32_t model_vocab_;
  std::vector<uint32_t> words_;
  bool fresh_ = false;
  double mask_seconds_ = 0;
};

}  // namespace ps
