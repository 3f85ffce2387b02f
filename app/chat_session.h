#pragma once
// The state of a terminal chat that does not depend on where the model runs: the system prompt,
// the sampling knobs, the last N turns of history, and the slash commands that change them.
// app/chat_command.cpp drives it; app/chat_backend.h runs the model.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "sampling/sampling_params.h"

namespace ps {

// The knobs a chat exposes (the same ones as the web page's side panel).
struct ChatKnobs {
  float temperature = 0.7f;
  float top_p = 1.0f;
  int32_t top_k = 0;
  int32_t max_tokens = 256;
  float repetition_penalty = 1.0f;
  std::optional<uint64_t> seed;
  bool ignore_eos = false;  // keep generating past EOS (to watch a long answer, or to test)
  // /set model NAME: a LoRA adapter the server (or --lora-modules) serves, by name, or the base
  // model by its name; empty: the backend's base model.
  std::string model;

  SamplingParams to_params() const;
  std::string describe() const;  // "temperature 0.7, top_p 1, ..." for /show
};

// What one input line asks for.
struct ChatAction {
  enum class Kind { kAsk, kInfo, kQuit } kind = Kind::kInfo;
  std::string info;                   // kInfo: what to print (may be an error message)
  std::vector<ChatMessage> messages;  // kAsk: the conversation to send, ending with the question
};

class ChatSession {
 public:
  ChatSession(ChatKnobs knobs, std::string system_prompt, int32_t history_turns);

  // A line typed by the user: a /command, or a question.
  ChatAction handle_line(const std::string& line);
  // The answer to the last kAsk; it joins the history. Not called when the request failed.
  void record_answer(const std::string& question, const std::string& answer);

  const ChatKnobs& knobs() const { return knobs_; }
  static const char* help();

 private:
  std::string set_knob(const std::string& name, const std::string& value);

  ChatKnobs knobs_;
  std::string system_;
  int32_t history_turns_;
  std::vector<ChatMessage> turns_;  // user, assistant, user, assistant, ...
};

}  // namespace ps
