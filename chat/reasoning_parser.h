#pragma once
// Splits a reasoning model's reply into reasoning (between <think> and </think>) and the
// answer, as vLLM's reasoning parsers do:
//   qwen3:       the model opens <think> itself; text before a leading <think> is dropped,
//                text with no <think> at its start is all answer.
//   deepseek_r1: the template already opened <think> in the prompt, so the reply starts inside
//                reasoning and only </think> appears (a leading <think> is dropped if the
//                model writes one anyway); a reply that never closes it is all reasoning.
//   harmony:     gpt-oss's channels (harmony_reader.h): analysis is reasoning, final is the
//                answer; a tool call stays in the answer as one canonical harmony message
//                (<|start|>assistant to=RECIPIENT<|channel|>commentary json<|message|>ARGS
//                <|call|>) for the harmony tool-call parser.
// The prompt decides where the reply starts when it says so: a prompt that ends inside an
// open <think> starts in reasoning whatever the style, and one that ends with a closed
// (empty) think block, as Qwen3's template writes for enable_thinking=false, starts in the
// answer, so that reply has no reasoning at all.
//
// Streaming: feed() takes text deltas and returns what can be emitted now; a tag split across
// deltas is held back until it is complete or ruled out, so no part of a tag is ever emitted.
// finish() flushes what is held. split_reasoning() on the whole text gives exactly the
// concatenation of the streamed parts.
#include <optional>
#include <string>
#include <string_view>

#include "chat/harmony_reader.h"

namespace ps::chat {

enum class ReasoningStyle { kQwen3, kDeepSeekR1, kHarmony };

// "qwen3" | "deepseek_r1" | "harmony" (also vLLM's name for it, "openai_gptoss"); nullopt
// otherwise.
std::optional<ReasoningStyle> parse_reasoning_style(std::string_view name);
const char* reasoning_style_name(ReasoningStyle style);
// The style --reasoning-parser takes when not given: harmony for a template that writes
// <|channel|>; none for a template that never mentions
// <think> or </think>; deepseek_r1 when `generation_prompt` (the template rendered for one
// user message with add_generation_prompt) leaves <think> open, or when the template knows
// only </think> (DeepSeek-R1's own); qwen3 otherwise.
std::optional<ReasoningStyle> detect_reasoning_style(const std::string& template_source,
                                                     const std::string& generation_prompt);

struct ReasoningDelta {
  std::string reasoning;
  std::string content;
};

class ReasoningParser {
 public:
  ReasoningParser(ReasoningStyle style, std::string_view prompt);

  ReasoningDelta feed(std::string_view text);
  ReasoningDelta finish();
  // Whether the reply has (so far) entered reasoning: false for an answer-only reply, whose
  // message then carries no reasoning_content at all.
  bool reached_reasoning() const {
    return harmony_ ? harmony_->reached_reasoning() : reached_reasoning_;
  }

 private:
  enum class State { kBeforeStart, kReasoning, kContent };
  void run(ReasoningDelta& out, bool at_end);

  State state_;
  bool drop_leading_start_;  // deepseek_r1: a leading <think> the model writes is not reasoning
  bool reached_reasoning_;
  std::string pending_;                   // text not yet emitted: a possible partial tag
  std::optional<HarmonyReader> harmony_;  // the harmony style reads with it
};

struct ReasoningSplit {
  std::optional<std::string> reasoning;  // nullopt when the reply has none
  std::optional<std::string> content;    // nullopt when empty, as vLLM reports it
};
ReasoningSplit split_reasoning(ReasoningStyle style, std::string_view prompt,
                               std::string_view text);

}  // namespace ps::chat
