#pragma once
// BPE tokenizer read from a Hugging Face `tokenizer.json`: byte-level (Qwen2/Qwen3/Llama 3/
// DeepSeek/MiniMind) or SentencePiece-style with byte fallback (Llama 2/Mistral/TinyLlama/Gemma).
// No torch: api/ and sampling/ use it directly.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ps {

// The few tokenizer_config.json fields that change how text becomes ids.
struct TokenizerOptions {
  // When either is set, encode(text, true) adds exactly these instead of what tokenizer.json's
  // post_processor says (transformers' Llama/Gemma tokenizers rebuild it from the flags).
  std::optional<bool> add_bos_token;
  std::optional<bool> add_eos_token;
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  // Special tokens written in the text are encoded as plain text, never as their ids.
  bool split_special_tokens = false;

  // Reads `path` (a tokenizer_config.json); a missing file gives the defaults. Throws
  // std::runtime_error naming the file and field when a field has the wrong type.
  static TokenizerOptions from_config_file(const std::string& path);
};

class Tokenizer {
 public:
  // Throws std::runtime_error naming the file and what is wrong. from_file also reads the
  // tokenizer_config.json beside the file, if there is one.
  static Tokenizer from_file(const std::string& tokenizer_json_path);
  static Tokenizer from_json_text(const std::string& json_text, const std::string& origin,
                                  const TokenizerOptions& options = {});

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Special (added) tokens in the text are matched first and map to their ids. With
  // `add_special_tokens` the post-processor's tokens (e.g. BOS) are added around the text.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = false) const;
  // The decoder's text for the whole sequence (e.g. SentencePiece's leading space stripped);
  // bytes that are not UTF-8 are kept as bytes (callers that stream use IncrementalDetokenizer,
  // which joins token_bytes() instead).
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  // The raw bytes a token adds when it follows other tokens (ByteLevel-decoded, or ▁ turned
  // into a space and <0xNN> into its byte; special tokens: their content).
  const std::string& token_bytes(int32_t id) const;
  bool is_special(int32_t id) const;
  std::optional<int32_t> token_to_id(std::string_view token) const;  // by vocab string
  int32_t vocab_size() const;  // largest id + 1, added tokens included

  // A table id -> raw bytes, shared with detokenizers (no copy per request).
  std::shared_ptr<const std::vector<std::string>> bytes_table() const;
  std::shared_ptr<const std::vector<bool>> special_table() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
