#pragma once
// The one request pipeline every generating route runs (/v1/chat/completions, /v1/completions,
// /v1/messages): a parsed request turned into engine requests (template, tools, grammar, LoRA
// by `model`), the engine's events split into reasoning, content and tool calls, and the
// failures (abort, engine error, timeout) every route reports in its own shape. Routes differ
// only in how they parse their body into the OpenAI form and how they render what comes back.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "api/serving_context.h"
#include "http/connection_watch.h"
#include "openai/choice_streams.h"
#include "openai/openai_response.h"

namespace ps {

// How long a handler waits for engine events before it looks at the connection again: the
// bound on how late a disconnect is noticed when no tokens are flowing. Each timeout wakes a
// handler thread, which preempts the engine's OpenMP threads on a machine whose cores are all
// theirs. At 50 ms, 256 streaming clients on 256 sequences (80 ms steps: every handler timed
// out once a step) spent 3.6 s of HTTP-thread CPU on 32768 tokens against 0.6 s at 64 clients,
// and gave 0.87-0.92x the 64-client output tok/s; at 250 ms, 0.8 s and 1.06x
// (bench/client_scaling.sh, issue #14's closing note).
inline constexpr std::chrono::milliseconds kPoll{250};

// A request turned into engine requests: choice i of prompt p is requests[p * n + i].
struct Prepared {
  ResponseMeta meta;
  std::vector<Request> requests;
  std::vector<int32_t> prompt_tokens;  // per prompt
  int32_t n = 1;
  bool stream = false;
  bool include_usage = false;
  bool want_logprobs = false;
  // Chat with a reasoning parser: the rendered prompt tells the parser where the reply starts.
  std::optional<chat::ReasoningStyle> reasoning;
  std::string chat_prompt;
  // Chat with tools (tool_choice not "none"): the reply's calls become tool_calls.
  std::optional<chat::ToolCallFormat> tools;
  // Completions echo / prompt_logprobs: each prompt's side (ids, text); empty when neither.
  std::vector<PromptSide> prompt_sides;
};

// The prompt side of choice i (a copy of its prompt's), with the prompt logprobs the engine's
// first event for it carried (moved out of `ev`); nullopt when the request asked for neither.
std::optional<PromptSide> prompt_side_of(const Prepared& p, size_t i, RequestOutput& ev);

// Validates and prepares an OpenAI-shaped body for `endpoint`.
std::variant<Prepared, ApiError> prepare(const ServingContext& ctx, Endpoint endpoint,
                                         const std::string& body);

// finish_reason "tool_calls" when a reply that ended by itself made calls, as OpenAI reports.
std::string finish_name(const RequestOutput& ev, bool made_calls);

// Usage over all choices: the prompt counts once per prompt, not once per choice.
struct UsageTally {
  Usage usage;
  void prompts(const std::vector<int32_t>& lens);
  void add(size_t index, int32_t n, const RequestOutput& ev);
};

// When a response must be complete; the time point's max when --request-timeout is off.
std::chrono::steady_clock::time_point deadline_of(const ServingContext& ctx);
// The 408 a response that ran past --request-timeout ends with.
ApiError timed_out(const ServingContext& ctx);
// An abort or engine error ends the response as an error instead of a finish reason.
std::optional<ApiError> failure_of(const RequestOutput& ev);

TokenBytes token_bytes_of(const std::shared_ptr<const ServingContext>& ctx);

// A whole (non-streamed) reply: every choice's output, reasoning and tool calls split off.
struct WholeReply {
  std::vector<ChoiceOutput> choices;
  Usage usage;
  // The matched stop string of each choice that ended on one ("" otherwise): Messages reports it.
  std::vector<std::string> stop_strings;
};
// What collecting a whole reply ended with: the reply, an error to send, or the client gone
// (nobody to answer; the streams, destroyed by the caller, are cancelled).
struct PeerGone {};
std::variant<WholeReply, ApiError, PeerGone> collect_whole(const ServingContext& ctx,
                                                           const Prepared& p,
                                                           ChoiceStreams& streams,
                                                           ConnectionWatch& watch);

// The streamed form: each engine event of choice i split into a delta (reasoning, content,
// tool-call fragments, finish reason) by one streaming reasoning parser and one tool-call
// parser per choice; a tag split across events is held back until it is complete.
class ReplySplitter {
 public:
  ReplySplitter(const Prepared& p, size_t choices);
  // The delta of one event (text moved out of `ev`); `failure` set when the event ends the
  // choice with an error (the delta then has no finish reason).
  ChunkDelta split(size_t i, RequestOutput& ev, std::optional<ApiError>* failure);

 private:
  std::vector<chat::ReasoningParser> parsers_;
  std::vector<chat::ToolCallParser> tool_parsers_;
};

}  // namespace ps
