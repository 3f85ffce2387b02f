#pragma once
// The added_tokens of tokenizer.json (<|im_start|>, <|endoftext|>, ...). They are found in the
// raw text before anything else runs, so the text between them is pre-tokenized on its own and
// no BPE merge ever crosses one.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ps {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool lstrip = false;  // swallows the whitespace before it
  bool rstrip = false;  // swallows the whitespace after it
  // Matched in the normalized text (content normalized too) rather than in the raw text.
  bool normalized = false;
};

class Normalizer;

class AddedTokens {
 public:
  // Throws std::runtime_error naming `origin` and added_tokens[i].
  static AddedTokens from_json(const nlohmann::json& added_tokens, const std::string& origin);

  const std::vector<AddedToken>& tokens() const { return tokens_; }

  // Prepares the matching: normalized tokens are looked for by their normalized content, and with
  // `split_special_tokens` special tokens are not matched at all (their text is encoded as plain
  // text, tokenizer_config.json's split_special_tokens).
  void prepare(const Normalizer& normalizer, bool split_special_tokens);

  // One piece of a text: plain text (token == nullptr) or an added token.
  struct Segment {
    std::string_view text;
    const AddedToken* token;
  };
  // Splits `text` at added tokens, leftmost match first and the longest one where several start
  // at the same byte (the Hugging Face rule). Plain segments are never empty. The raw pass finds
  // the tokens that are not normalized; the normalized pass runs on each normalized plain
  // segment and finds the others.
  enum class Pass { kRaw, kNormalized };
  std::vector<Segment> split(std::string_view text, Pass pass = Pass::kRaw) const;

 private:
  struct Pattern {
    std::string text;
    uint32_t token;  // index into tokens_
  };
  using Buckets = std::array<std::vector<Pattern>, 256>;  // by first byte, longest first
  std::vector<AddedToken> tokens_;
  Buckets raw_;
  Buckets normalized_;
};

}  // namespace ps
