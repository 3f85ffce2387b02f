#include "structured/constrained_row.h"

#include <algorithm>
#include <chrono>

namespace ps {

ConstrainedRow::ConstrainedRow(std::shared_ptr<const CompiledGrammar> grammar, int32_t model_vocab)
    : matcher_(std::move(grammar)), model_vocab_(model_vocab) {
  size_t words = (static_cast<size_t>(std::max(model_vocab, 0)) + 31) / 32;
  words_.assign(std::max(words, matcher_.mask_words()), 0);
}

const uint32_t* ConstrainedRow::mask() {
  if (fresh_) return words_.data();
  auto t0 = std::chrono::steady_clock::now();
  std::fill(words_.begin(), words_.end(), 0);
  matcher_.fill_next_token_bitmask(words_.data());  // writes the grammar vocabulary's words
  // Ids past the model's vocabulary (a tokenizer with more tokens than embedding rows) are
  // never sampled anyway; past the tokenizer's table nothing is set, so they stay banned.
  fresh_ = true;
  mask_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return words_.data();
}

bool ConstrainedRow::advance(int32_t token) {
  if (!matcher_.accept_token(token)) return false;
  fresh_ = false;
  return true;
}

}  // namespace ps
