#pragma once
// Training and evaluation examples for the tiny chat model: read from JSONL, rendered by the
// model's Jinja chat template (train/tiny_chat_template.h, the one the server uses) and
// tokenized with a per-token loss mask.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_renderer.h"
#include "chat/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "train/tiny_chat_template.h"

namespace ps {

// One chat whose last message is the assistant reply that is trained on or scored.
struct ChatExample {
  // OpenAI chat messages: roles system, user, assistant (content, or tool_calls with
  // function.name and function.arguments) and tool (content, tool_call_id).
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null, or OpenAI's tools list the template shows
  std::string kind;   // free-form label from the file ("topic", "tool_call", ...), may be empty
  std::string reply;  // the last message as the tiny template writes it: what the model must say

  // Checks the shape and renders the reply; throws std::runtime_error saying what is wrong.
  static ChatExample make(nlohmann::ordered_json messages, nlohmann::ordered_json tools,
                          std::string kind);
  // Plain role/content turns (tests, the old schema).
  static ChatExample from_turns(const std::vector<ChatMessage>& turns, std::string kind);

  // The text of the message the reply answers (a user question or a tool result).
  std::string question() const;
  const std::string& answer() const { return reply; }
  // Every message but the reply: what a client sends to ask the question.
  nlohmann::ordered_json prompt_messages() const;
};

// Reads one example per non-empty line: {"question": q, "answer": a} or
// {"messages": [...], "tools": [...] (optional)} ending in an assistant message that follows a
// user or tool message. Throws std::runtime_error naming the file and line on malformed input
// or an empty file.
std::vector<ChatExample> read_chat_jsonl(const std::string& path);

// Marks positions whose next-token prediction is not trained (prompt tokens, padding).
constexpr int32_t kIgnoreTarget = -100;

// tokens = rendered prompt (with the assistant generation prompt) + reply + <|im_end|>.
// targets[i] is the token at i + 1 when it belongs to the reply or its closing <|im_end|>,
// kIgnoreTarget otherwise, so the loss covers exactly what the model must generate.
struct TokenizedExample {
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;  // same length as tokens
};

// Throws std::runtime_error when the example does not fit in max_len tokens (a silently cut
// answer would teach the model to stop mid-sentence) or a message holds a special token's text.
TokenizedExample tokenize_example(const Tokenizer& tokenizer, const ChatExample& example,
                                  int32_t max_len,
                                  const chat::ChatRenderer& renderer = tiny_chat_renderer());

// The prompt the server would build for this example's question, with the assistant generation
// prompt, as token ids.
std::vector<int32_t> prompt_tokens(const Tokenizer& tokenizer, const ChatExample& example,
                                   const chat::ChatRenderer& renderer = tiny_chat_renderer());

// Every example rendered whole, one after another: the corpus the tokenizer's merges are
// learned from, so the template's own text (role names, the tools block) gets merges too.
std::string tokenizer_corpus(const std::vector<ChatExample>& examples);

}  // namespace ps
