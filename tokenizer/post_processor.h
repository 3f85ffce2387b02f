#pragma once
// What encode() adds around the text's ids when add_special_tokens is true: the post_processor
// section of tokenizer.json (TemplateProcessing's "single" template, e.g. Llama's <s> or Llama
// 3's <|begin_of_text|>; ByteLevel adds nothing), or, where tokenizer_config.json sets
// add_bos_token / add_eos_token, the BOS/EOS those flags ask for (what transformers' Llama and
// Gemma tokenizers build instead of the file's template).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ps {

class PostProcessor {
 public:
  // Throws std::runtime_error naming `origin` and what is wrong.
  static PostProcessor from_json(const nlohmann::json& post_processor, const std::string& origin);

  // The template [bos?] $A [eos?]; a flag set with no token id is an error naming the token.
  static PostProcessor from_flags(bool add_bos, std::optional<int32_t> bos, bool add_eos,
                                  std::optional<int32_t> eos, const std::string& origin);

  void apply(std::vector<int32_t>& ids) const;

  const std::vector<int32_t>& prefix() const { return prefix_; }
  const std::vector<int32_t>& suffix() const { return suffix_; }

 private:
  std::vector<int32_t> prefix_;  // ids before the text
  std::vector<int32_t> suffix_;  // ids after it
};

}  // namespace ps
