#pragma once
// OpenAI response bodies and stream chunks, built from the engine's events. Pure functions of
// their inputs, so tests check the exact shapes clients parse.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/tool_call_parser.h"
#include "engine/request.h"
#include "openai/api_error.h"
#include "openai/openai_request.h"

namespace ps {

// What every body and chunk of one response repeats.
struct ResponseMeta {
  Endpoint endpoint = Endpoint::kChat;
  std::string id;  // chatcmpl-... | cmpl-...
  int64_t created = 0;
  std::string model;
};
ResponseMeta new_response_meta(Endpoint endpoint, std::string model);

// The raw bytes of a token, for logprobs (they may be an incomplete UTF-8 sequence).
using TokenBytes = std::function<std::string(int32_t token_id)>;

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
};

// The prompt side of a choice: /v1/completions' echo and vLLM's prompt_logprobs.
struct PromptSide {
  bool echo = false;           // completions: the prompt's text (and token logprobs) come first
  bool with_logprobs = false;  // the choice carries prompt_logprobs (the first entry null)
  std::string text;            // the prompt as sent (echo)
  std::vector<int32_t> ids;
  std::vector<TokenLogprob> logprobs;  // entry i scores ids[i + 1]
  bool any() const { return echo || with_logprobs; }
};

struct ChoiceOutput {
  int32_t index = 0;
  std::string text;  // chat: the answer (content) once a reasoning parser has split the reply
  std::vector<TokenLogprob> logprobs;
  std::string finish_reason;  // "stop" | "length"
  // With a reasoning parser (--reasoning-parser): the message carries reasoning_content when
  // the reply reasoned, and content is null when empty, as vLLM answers.
  bool reasoning_parsed = false;
  std::optional<std::string> reasoning = std::nullopt;
  // With tools (tool_choice other than none): the calls the reply made; content is null when
  // the reply was only calls.
  bool tools_parsed = false;
  std::vector<chat::ToolCall> tool_calls = {};
  PromptSide prompt = {};
};

// "stop" | "length"; abort and error never reach a successful body.
std::string finish_reason_name(FinishReason reason);

nlohmann::json error_json(const ApiError& error);
nlohmann::json usage_json(const Usage& usage);

// The non-streaming body: chat.completion or text_completion.
nlohmann::json completion_body(const ResponseMeta& meta, const std::vector<ChoiceOutput>& choices,
                               const Usage& usage, bool with_logprobs, const TokenBytes& bytes);

// One streamed delta of one choice. `role_delta`: the chat chunk that opens a choice carries
// the assistant role (and refusal: null). `reasoning`: streamed as delta.reasoning_content,
// before the chunk's content. `text_offset` carries the completions logprobs offset across chunks.
struct ChunkDelta {
  int32_t index = 0;
  bool role_delta = false;
  std::string reasoning;
  std::string text;
  // delta.tool_calls: a call's first delta carries index, id, type and name (arguments ""),
  // later ones index and an arguments fragment.
  std::vector<chat::ToolCallDelta> tool_calls = {};
  const std::vector<TokenLogprob>* logprobs = nullptr;  // null: "logprobs": null
  // The first chunk of a choice whose request echoes or scores its prompt: that side of it.
  const PromptSide* prompt = nullptr;
  std::optional<std::string> finish_reason;
};
nlohmann::json stream_chunk(const ResponseMeta& meta, const ChunkDelta& delta, bool usage_field,
                            const TokenBytes& bytes, int64_t* text_offset);

// The last chunk when stream_options.include_usage is set: no choices, the totals.
nlohmann::json usage_chunk(const ResponseMeta& meta, const Usage& usage);

}  // namespace ps
