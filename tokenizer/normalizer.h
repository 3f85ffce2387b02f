#pragma once
// The normalizer section of tokenizer.json: Replace, Prepend and Unicode normalization forms
// (NFC/NFD/NFKC/NFKD through ICU), alone or in a Sequence. SentencePiece-style tokenizers
// (Llama 2, Mistral, Gemma) use Prepend("▁") + Replace(" " -> "▁") here; Qwen uses NFC.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ps {

class Normalizer {
 public:
  // Throws std::runtime_error naming `origin` and the unsupported or malformed step.
  static Normalizer from_json(const nlohmann::json& normalizer, const std::string& origin);

  Normalizer();
  Normalizer(Normalizer&&) noexcept;
  Normalizer& operator=(Normalizer&&) noexcept;
  ~Normalizer();

  bool empty() const { return steps_.empty(); }

  // The normalized text. Bytes that are not well-formed UTF-8 pass through unchanged (byte-level
  // vocabularies can still spell them); only the well-formed runs around them are normalized.
  std::string apply(std::string_view text) const;

 private:
  struct Step;
  std::vector<std::unique_ptr<Step>> steps_;
};

}  // namespace ps
