#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ps {

// Turns generated token ids into text one token at a time, emitting only whole UTF-8
// characters. Byte-level BPE tokens often split a character (a CJK character or an emoji
// over 2-4 tokens), and a token may even be a lone continuation byte; such bytes are held
// back until they complete a character or can no longer do so.
//
// The text is exactly the UTF-8 decoding, with one U+FFFD per invalid sequence (see
// utf8.h), of the concatenated bytes of the tokens (special tokens left out when skipped).
// So the concatenation of every append() and the final flush() does not depend on how the
// tokens arrived, and is always valid UTF-8. Nothing here throws on token content.
class IncrementalDetokenizer {
 public:
  // token_bytes[id]: the raw bytes of token id (Tokenizer::bytes_table()); is_special may be
  // null (no special tokens). Ids outside the table decode to nothing.
  IncrementalDetokenizer(std::shared_ptr<const std::vector<std::string>> token_bytes,
                         std::shared_ptr<const std::vector<bool>> is_special,
                         bool skip_special_tokens);

  // Newly complete text (possibly empty).
  std::string append(int32_t token);
  // At finish: bytes that never completed a character become one U+FFFD.
  std::string flush();

  // Bytes held back as the start of a character not yet complete (at most 3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  std::string drain(bool at_end);

  std::shared_ptr<const std::vector<std::string>> token_bytes_;
  std::shared_ptr<const std::vector<bool>> is_special_;
  bool skip_special_tokens_;
  std::string pending_;
};

}  // namespace ps
