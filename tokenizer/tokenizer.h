#pragma once
// Byte-level BPE tokenizer read from a Hugging Face `tokenizer.json` (Qwen2/Qwen3/Llama-3/
// MiniMind layout). No torch: api/ and sampling/ use it directly.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ps {

class Tokenizer {
 public:
  // Throws std::runtime_error naming the file and what is wrong.
  static Tokenizer from_file(const std::string& tokenizer_json_path);
  static Tokenizer from_json_text(const std::string& json_text, const std::string& origin);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Special (added) tokens in the text are matched first and map to their ids.
  std::vector<int32_t> encode(std::string_view text) const;
  // Concatenates raw token bytes; invalid UTF-8 at the end is kept as bytes (callers that
  // stream use IncrementalDetokenizer instead).
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  // The raw bytes a token stands for (ByteLevel-decoded; special tokens: their content).
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
