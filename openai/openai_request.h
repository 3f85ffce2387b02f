#pragma once
// The bodies of POST /v1/chat/completions and /v1/completions, parsed and validated into what
// the engine needs. Every client mistake becomes an ApiError naming the field; nothing here
// throws to the HTTP layer.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chat/chat_prompt.h"
#include "openai/api_error.h"
#include "openai/generation_defaults.h"
#include "openai/structured_request.h"
#include "sampling/sampling_params.h"

namespace ps {

enum class Endpoint { kChat, kCompletion };

// One completions prompt: text to encode, or token ids given by the client.
struct PromptInput {
  bool is_ids = false;
  std::string text;
  std::vector<int32_t> ids;
};

struct RequestLimits {
  int32_t vocab_size = 0;  // token ids (prompt, stop_token_ids, logit_bias) must be below it
  int32_t max_n = 16;
  int32_t max_logprobs = 20;
  int32_t max_stop = 16;
  // --max-tokens-limit: an explicit max_tokens above it is refused; a default one is cut to it.
  // 0: no limit beyond the context.
  int32_t max_tokens_limit = 0;
  // The checkpoint's generation_config.json (--generation-config auto): fills the sampling
  // fields a request leaves out.
  GenerationDefaults generation_defaults;
  // --max-queue-seconds / --max-request-seconds: the deadlines of a request that sends none,
  // and the most one may ask (0: no server deadline).
  double max_queue_seconds = 0;
  double max_request_seconds = 0;
};

// When the engine gives up on a request (engine/request.h): `priority` (vLLM's field, lower
// first; only under --scheduling-policy priority), and its queue and total deadlines in
// seconds from arrival, each the body's (max_queue_seconds, max_request_seconds) capped by the
// server's, or the server's; nullopt: none.
struct SchedulingRequest {
  int32_t priority = 0;
  std::optional<double> queue_seconds;
  std::optional<double> total_seconds;
};

struct OpenAiRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;                 // as sent; empty when absent
  chat::ChatPromptRequest chat;      // chat: messages and the template's fields
  std::vector<PromptInput> prompts;  // completions: one or more, each gets n choices
  SamplingParams params;             // params.n choices per prompt
  bool max_tokens_given = false;     // else the default fills what the context leaves
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool want_logprobs = false;  // the response carries logprobs (params.logprobs >= 0)
  // prompt_logprobs was sent: each choice carries vLLM's prompt_logprobs list.
  bool want_prompt_logprobs = false;
  bool echo = false;  // completions: the prompt comes back before the text (and its logprobs)
  std::string user;
  ToolRequest tools;            // chat: tools and tool_choice (the template sees chat.tools)
  OutputConstraint constraint;  // response_format / structured_outputs
  SchedulingRequest scheduling;
};

// Parses `body` for `endpoint`. Fills every sampling field from the body; a field the body leaves
// out takes limits.generation_defaults' value where it has one, else OpenAI's default
// (temperature 1, completions max_tokens 16).
std::variant<OpenAiRequest, ApiError> parse_openai_request(std::string_view body, Endpoint endpoint,
                                                           const RequestLimits& limits);

// Makes `params.max_tokens` fit the context: an explicit max_tokens that does not fit is an
// error whose message says both numbers; a default one is cut to what is left. A prompt that
// leaves no room for one token is always an error.
std::optional<ApiError> fit_to_context(Endpoint endpoint, int32_t prompt_tokens,
                                       int32_t max_model_len, bool max_tokens_given,
                                       SamplingParams* params);

// POST /tokenize: {"prompt": "..."} or {"messages": [...], ...} with the chat fields of
// /v1/chat/completions (add_generation_prompt, continue_final_message, chat_template_kwargs).
struct TokenizeRequest {
  std::string model;
  bool is_chat = false;
  std::string prompt;
  chat::ChatPromptRequest chat;
};
std::variant<TokenizeRequest, ApiError> parse_tokenize_request(std::string_view body);

// POST /detokenize: {"tokens": [ids]}.
struct DetokenizeRequest {
  std::string model;
  std::vector<int32_t> tokens;
};
std::variant<DetokenizeRequest, ApiError> parse_detokenize_request(std::string_view body,
                                                                   int32_t vocab_size);

}  // namespace ps
