#pragma once
// Scores a model's greedy replies against target answers: exact match and character-level
// similarity, the two numbers `pagedserve eval` reports per split.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "train/chat_data.h"

namespace ps {

struct ModelWeights;

// 1 - Levenshtein(a, b) / max(len a, len b), lengths in Unicode code points (a Chinese
// character counts once, not three times). 1 for two empty strings. Ill-formed UTF-8 bytes count
// as one code point each.
double char_similarity(std::string_view a, std::string_view b);

// The greedy reply to the example's prompt (all messages but the last), up to the model's EOS
// or max_new_tokens, decoded without special tokens.
std::string greedy_reply(const ModelWeights& weights, const Tokenizer& tokenizer,
                         const ChatExample& example, int32_t max_new_tokens);

struct EvalItem {
  std::string kind;  // the example's label, for per-kind breakdowns
  std::string question;
  std::string target;
  std::string output;
  bool exact = false;
  double similarity = 0;
};

struct EvalSummary {
  std::vector<EvalItem> items;
  int64_t exact = 0;
  double mean_similarity = 0;
  double exact_rate() const { return items.empty() ? 0.0 : double(exact) / double(items.size()); }
};

// on_item (optional) sees each item as it is scored, for progress output.
template <typename F>
EvalSummary evaluate(const ModelWeights& weights, const Tokenizer& tokenizer,
                     const std::vector<ChatExample>& examples, int32_t max_new_tokens, F on_item);

EvalSummary evaluate(const ModelWeights& weights, const Tokenizer& tokenizer,
                     const std::vector<ChatExample>& examples, int32_t max_new_tokens);

// Scores one reply.
EvalItem score_reply(const ChatExample& example, std::string output);

template <typename F>
EvalSummary evaluate(const ModelWeights& weights, const Tokenizer& tokenizer,
                     const std::vector<ChatExample>& examples, int32_t max_new_tokens, F on_item) {
  EvalSummary s;
  double total = 0;
  for (const ChatExample& ex : examples) {
    s.items.push_back(score_reply(ex, greedy_reply(weights, tokenizer, ex, max_new_tokens)));
    s.exact += s.items.back().exact ? 1 : 0;
    total += s.items.back().similarity;
    on_item(s.items.back());
  }
  s.mean_similarity = s.items.empty() ? 0.0 : total / double(s.items.size());
  return s;
}

}  // namespace ps
