#pragma once
// The pre_tokenizer section of tokenizer.json: a sequence of regex Split steps ending in a
// ByteLevel step (Qwen2/Qwen3/Llama-3), or a lone ByteLevel step with GPT-2's built-in pattern.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tokenizer/regex.h"

namespace ps {

class PreTokenizer {
 public:
  // Throws std::runtime_error naming `origin` and the unsupported component.
  static PreTokenizer from_json(const nlohmann::json& pre_tokenizer, const std::string& origin);

  // ByteLevel add_prefix_space: the caller puts a space before each section that lacks one.
  bool add_prefix_space() const { return add_prefix_space_; }

  // Appends the pieces of `text` (a section with no added tokens in it) in order; together they
  // cover every byte of `text`. Ill-formed UTF-8 never reaches PCRE2: each bad byte is a piece of
  // its own, and the well-formed runs around it are split separately.
  void split(std::string_view text, std::vector<Regex::Span>& pieces) const;

 private:
  enum class Behavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext, kContiguous };
  struct Step {
    Regex regex;
    Behavior behavior;
    bool invert;
  };

  void apply(const Step& step, std::string_view text, Regex::Span whole,
             std::vector<Regex::Span>& pieces) const;

  std::vector<Step> steps_;
  bool add_prefix_space_ = false;
};

}  // namespace ps
