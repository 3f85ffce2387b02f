#pragma once
// Shared by the training tests: a handful of chat examples, a tokenizer learned from them, and a
// model shape small enough to train for a few steps in well under a second.
#include <string>
#include <vector>

#include "model/model_config.h"
#include "tests/model/tiny_test_util.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer.h"
#include "train/chat_data.h"

namespace ps::traintest {

inline std::vector<ChatExample> small_examples() {
  const std::vector<std::pair<std::string, std::string>> qa = {
      {"Who are you?", "I am a tiny model."},
      {"你是谁？", "我是一个小模型。"},
      {"What is 2 + 3?", "2 + 3 = 5."},
      {"What is a KV cache?", "It stores keys and values of earlier tokens."},
      {"Count from 1 to 4.", "1, 2, 3, 4."},
      {"你好！", "你好！有什么可以帮你的吗？"},
  };
  std::vector<ChatExample> out;
  for (const auto& [q, a] : qa) {
    out.push_back(ChatExample::from_turns({{"user", q}, {"assistant", a}}, "test"));
  }
  out.push_back(ChatExample::from_turns(
      {{"system", "Answer briefly."}, {"user", "Hello!"}, {"assistant", "Hello!"}}, "test"));
  return out;
}

inline Tokenizer small_tokenizer(const std::vector<ChatExample>& examples) {
  BpeTrainOptions o;
  o.vocab_size = 320;
  return Tokenizer::from_json_text(train_byte_level_bpe(tokenizer_corpus(examples), o), "test");
}

inline ModelConfig small_train_config(int32_t vocab_size) {
  ModelConfig c = testutil::small_config("qwen3");
  c.hidden_size = 32;
  c.num_attention_heads = 2;
  c.num_key_value_heads = 1;
  c.head_dim = 16;
  c.intermediate_size = 64;
  c.vocab_size = vocab_size;
  c.eos_token_ids = {2, 0};
  return c;
}

}  // namespace ps::traintest
