#pragma once
// The decoder section of tokenizer.json: ByteLevel (GPT-2 byte alphabet), and the SentencePiece
// family's Replace("▁" -> " "), ByteFallback (<0xNN> -> byte), Fuse, Strip and Metaspace, alone
// or in a Sequence. Decoding works on raw bytes: a byte sequence that is not UTF-8 is kept as it
// is (the reference writes U+FFFD instead), so streaming detokenizers can join partial pieces.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ps {

class Decoder {
 public:
  struct Token {
    std::string text;  // vocab spelling, or an added token's content
    bool added;        // added tokens are not byte-level decoded (their content is literal)
  };

  // Throws std::runtime_error naming `origin` and the unsupported or malformed step.
  static Decoder from_json(const nlohmann::json& decoder, const std::string& origin);

  Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;
  ~Decoder();

  // The whole text of a token sequence, every step applied as the reference applies it
  // (Strip after Fuse trims the text's ends; Metaspace treats the first token specially).
  std::string decode(std::vector<Token> tokens) const;

  // The bytes one token adds when it follows other tokens: the per-token steps only, with no
  // first-token or text-end trimming. Concatenating these gives a continuation's text.
  std::string continuation_bytes(const Token& token) const;

  // True when decode() equals the concatenation of continuation_bytes() (no step looks at a
  // token's place in the text), so callers may join precomputed bytes instead.
  bool position_free() const { return position_free_; }

 private:
  struct Step;
  std::vector<std::unique_ptr<Step>> steps_;
  bool position_free_ = true;
};

}  // namespace ps
