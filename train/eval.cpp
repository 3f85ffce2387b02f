#include "train/eval.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "model/model_weights.h"
#include "reference/naive_generate.h"

namespace ps {
namespace {

// Code points of UTF-8 text; a byte that starts no well-formed sequence stands for itself
// (offset past the Unicode range so it never equals a real character).
std::vector<uint32_t> code_points(std::string_view s) {
  std::vector<uint32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<uint8_t>(s[i]);
    const size_t len = b < 0x80           ? 1
                       : (b >> 5) == 0x6  ? 2
                       : (b >> 4) == 0xE  ? 3
                       : (b >> 3) == 0x1E ? 4
                                          : 0;
    bool ok = len > 0 && i + len <= s.size();
    uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
    for (size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<uint8_t>(s[i + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    if (ok) {
      out.push_back(cp);
      i += len;
    } else {
      out.push_back(0x110000u + b);
      i += 1;
    }
  }
  return out;
}

}  // namespace

double char_similarity(std::string_view a, std::string_view b) {
  const std::vector<uint32_t> x = code_points(a);
  const std::vector<uint32_t> y = code_points(b);
  if (x.empty() && y.empty()) return 1.0;
  // One row of the edit-distance table at a time.
  std::vector<size_t> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= x.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= y.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (x[i - 1] == y[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return 1.0 -
         static_cast<double>(row[y.size()]) / static_cast<double>(std::max(x.size(), y.size()));
}

std::string greedy_reply(const ModelWeights& weights, const Tokenizer& tokenizer,
                         const ChatExample& example, int32_t max_new_tokens) {
  const at::NoGradGuard no_grad;
  const std::vector<int32_t> ids =
      naive_generate(weights, prompt_tokens(tokenizer, example), max_new_tokens, 0.0f, 0,
                     weights.config.eos_token_ids);
  return tokenizer.decode(ids, /*skip_special_tokens=*/true);
}

EvalItem score_reply(const ChatExample& example, std::string output) {
  EvalItem item;
  item.kind = example.kind;
  item.question = example.question();
  item.target = example.answer();
  item.output = std::move(output);
  item.exact = item.output == item.target;
  item.similarity = char_similarity(item.output, item.target);
  return item;
}

EvalSummary evaluate(const ModelWeights& weights, const Tokenizer& tokenizer,
                     const std::vector<ChatExample>& examples, int32_t max_new_tokens) {
  return evaluate(weights, tokenizer, examples, max_new_tokens, [](const EvalItem&) {});
}

}  // namespace ps
