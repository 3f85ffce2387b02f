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
};

class AddedTokens {
 public:
  // Throws std::runtime_error naming `origin` and added_tokens[i].
  static AddedTokens from_json(const nlohmann::json& added_tokens, const std::string& origin);

  const std::vector<AddedToken>& tokens() const { return tokens_; }

  // One piece of a text: plain text (token == nullptr) or an added token.
  struct Segment {
    std::string_view text;
    const AddedToken* token;
  };
  // Splits `text` at added tokens, leftmost match first and the longest one where several start
  // at the same byte (the Hugging Face rule). Plain segments are never empty.
  std::vector<Segment> split(std::string_view text) const;

 private:
  std::vector<AddedToken> tokens_;
  // Indices into tokens_ by first byte, longest content first.
  std::array<std::vector<uint32_t>, 256> by_first_byte_;
};

}  // namespace ps
