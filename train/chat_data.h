#pragma once
// Training and evaluation examples for the tiny chat model: read from JSONL, rendered in ChatML
// (the format the server's chat template produces) and tokenized with a per-token loss mask.
#include <cstdint>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace ps {

// One chat whose last message is the assistant reply that is trained on or scored.
struct ChatExample {
  std::vector<ChatMessage> messages;
  std::string kind;  // free-form label from the file ("topic", "arithmetic", ...), may be empty

  const std::string& question() const;  // the last user message
  const std::string& answer() const;    // the last (assistant) message
  // Every message but the reply: what a client sends to ask the question.
  std::vector<ChatMessage> prompt_messages() const;
};

// Reads one example per non-empty line: {"question": q, "answer": a} or
// {"messages": [{"role", "content"}, ...]} ending in an assistant message. Throws
// std::runtime_error naming the file and line on malformed input or an empty file.
std::vector<ChatExample> read_chat_jsonl(const std::string& path);

// Marks positions whose next-token prediction is not trained (prompt tokens, padding).
constexpr int32_t kIgnoreTarget = -100;

// tokens = ChatML prompt (with the assistant generation prompt) + reply + <|im_end|>.
// targets[i] is the token at i + 1 when it belongs to the reply or its closing <|im_end|>,
// kIgnoreTarget otherwise, so the loss covers exactly what the model must generate.
struct TokenizedExample {
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;  // same length as tokens
};

// Throws std::runtime_error when the example does not fit in max_len tokens (a silently cut
// answer would teach the model to stop mid-sentence) or a message holds a special token's text.
TokenizedExample tokenize_example(const Tokenizer& tokenizer, const ChatExample& example,
                                  int32_t max_len);

// The prompt the server would build for this example's question: ChatML with the assistant
// generation prompt, as token ids.
std::vector<int32_t> prompt_tokens(const Tokenizer& tokenizer, const ChatExample& example);

// All message texts, one per line: the corpus the tokenizer's merges are learned from.
std::string tokenizer_corpus(const std::vector<ChatExample>& examples);

}  // namespace ps
