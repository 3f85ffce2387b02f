#pragma once
// Learns a byte-level BPE from text and writes it as a Hugging Face tokenizer.json, so the tiny
// model the project generates has a real tokenizer that any HF-compatible library reads.
#include <cstdint>
#include <string>
#include <vector>

namespace ps {

struct BpeTrainOptions {
  int32_t vocab_size = 6400;  // special tokens + 256 bytes + merges
  std::vector<std::string> special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  // Added tokens that are not special (like Qwen's <tool_call>): one id each right after the
  // special tokens, matched before pre-tokenization, kept in decoded text even when special
  // tokens are skipped.
  std::vector<std::string> added_tokens;
  int32_t min_pair_frequency = 2;  // stop merging below this (vocab may end smaller)
};

// Special tokens take ids 0..k-1, the non-special added tokens the next ids, the 256 byte
// tokens follow, then one id per merge.
// Returns the tokenizer.json text.
std::string train_byte_level_bpe(const std::string& corpus, const BpeTrainOptions& options);

// Text written by this project (Chinese, English, code, emoji) to learn the tiny model's merges.
const std::string& tiny_model_corpus();

}  // namespace ps
