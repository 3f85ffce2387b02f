#pragma once
// The pre_tokenizer section of tokenizer.json: a sequence of regex Split steps ending in a
// ByteLevel step (Qwen2/Qwen3/Llama-3), a lone ByteLevel step with GPT-2's built-in pattern, or
// for SentencePiece-style vocabularies nothing, Split steps, or a Metaspace step first (Mistral
// v0.3 and Llama 2 files converted without "legacy").
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

  // True when a ByteLevel step is present: the vocabulary spells raw bytes in GPT-2's alphabet.
  bool byte_level() const { return byte_level_; }

  // True when prepare() may change the text (ByteLevel add_prefix_space, or Metaspace).
  bool rewrites() const { return add_prefix_space_ || metaspace_; }

  // The text the split steps run on: ByteLevel add_prefix_space puts a space before a section
  // that lacks one; Metaspace turns spaces into its replacement and prepends one (always, or
  // with prepend_scheme "first" only to the section that starts the whole input).
  std::string prepare(std::string_view text, bool starts_input) const;

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
  bool byte_level_ = false;
  bool add_prefix_space_ = false;
  bool metaspace_ = false;
  enum class Prepend { kAlways, kFirst, kNever } metaspace_prepend_ = Prepend::kAlways;
  std::string metaspace_replacement_;
};

}  // namespace ps
