#include "api/completion_handler.h"

#include <httplib.h>

#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include "api/http_reply.h"
#include "api/lora_admin.h"
#include "http/connection_watch.h"
#include "http/sse.h"
#include "openai/chat_messages.h"
#include "openai/choice_streams.h"
#include "openai/constraint_builder.h"
#include "openai/openai_response.h"

namespace ps {
namespace {

// How long a handler waits for engine events before it looks at the connection again: the
// bound on how late a disconnect is noticed when no tokens are flowing. Each timeout wakes a
// handler thread, which preempts the engine's OpenMP threads on a machine whose cores are all
// theirs. At 50 ms, 256 streaming clients on 256 sequences (80 ms steps: every handler timed
// out once a step) spent 3.6 s of HTTP-thread CPU on 32768 tokens against 0.6 s at 64 clients,
// and gave 0.87-0.92x the 64-client output tok/s; at 250 ms, 0.8 s and 1.06x
// (bench/client_scaling.sh, issue #14's closing note).
constexpr std::chrono::milliseconds kPoll{250};

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
};

// finish_reason "tool_calls" when a reply that ended by itself made calls, as OpenAI reports.
std::string finish_name(const RequestOutput& ev, bool made_calls) {
  if (made_calls && *ev.finish == FinishReason::kStop) return "tool_calls";
  return finish_reason_name(*ev.finish);
}

std::variant<Prepared, ApiError> prepare(const ServingContext& ctx, Endpoint endpoint,
                                         const std::string& body) {
  auto parsed = parse_openai_request(body, endpoint, ctx.limits);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  OpenAiRequest& r = std::get<OpenAiRequest>(parsed);
  // The base model or a LoRA adapter by name; the lease keeps the adapter until the requests end.
  auto resolved = resolve_model(ctx, r.model);
  if (auto* e = std::get_if<ApiError>(&resolved)) return *e;
  const auto lora = std::get<std::shared_ptr<const LoraLease>>(std::move(resolved));

  if (r.tools.active() && !ctx.tool_parser) {
    return invalid_param("tools",
                         "this server has no tool-call parser for its chat template; start it "
                         "with --tool-call-parser hermes|llama3_json|mistral");
  }

  // The grammar is compiled here, on the handler thread, so a slow or refused compile never
  // holds up the engine's steps for other requests.
  std::shared_ptr<const CompiledGrammar> grammar;
  try {
    if (auto spec = constraint_for(r, ctx.tool_parser))
      grammar = ctx.grammar_compiler->compile(*spec);
  } catch (const StructuredError& e) {
    const std::string param = r.tools.active() ? "tools" : r.constraint.param;
    return invalid_param(param, std::string("cannot constrain the output as asked: ") + e.what());
  }

  std::vector<std::vector<int32_t>> prompts;
  std::string chat_prompt;
  if (endpoint == Endpoint::kChat) {
    auto rendered = render_prompt(*ctx.chat_renderer, r.chat);
    if (auto* e = std::get_if<ApiError>(&rendered)) return *e;
    chat_prompt = std::move(std::get<std::string>(rendered));
    prompts.push_back(ctx.tokenizer->encode(chat_prompt));
  } else {
    for (auto& p : r.prompts) {
      // A raw text prompt gets the tokenizer's BOS/EOS as vLLM's completions do
      // (add_special_tokens defaults to true there); chat templates write their own.
      prompts.push_back(p.is_ids ? std::move(p.ids)
                                 : ctx.tokenizer->encode(p.text, /*add_special_tokens=*/true));
    }
  }

  Prepared out;
  out.meta = new_response_meta(endpoint, lora ? r.model : ctx.served_model_name);
  out.n = r.params.n;
  out.stream = r.stream;
  out.include_usage = r.include_usage;
  out.want_logprobs = r.want_logprobs;
  if (endpoint == Endpoint::kChat) {
    out.reasoning = ctx.reasoning;
    out.chat_prompt = std::move(chat_prompt);
    if (r.tools.active()) out.tools = ctx.tool_parser;
  }
  for (auto& ids : prompts) {
    if (ids.empty()) {
      return invalid_param(endpoint == Endpoint::kChat ? "messages" : "prompt",
                           "the prompt encodes to no tokens");
    }
    SamplingParams params = r.params;
    if (auto e = fit_to_context(endpoint, static_cast<int32_t>(ids.size()), ctx.max_model_len,
                                r.max_tokens_given, &params)) {
      return *e;
    }
    params.n = 1;  // the engine runs one sequence per request; choices are separate requests
    params.grammar = grammar;  // each choice gets its own matcher in the engine
    for (int32_t i = 0; i < r.params.n; ++i) {
      Request req{ids, params};
      req.lora = lora;
      // Seeded choices differ from each other yet are each reproducible.
      if (r.params.seed) req.params.seed = *r.params.seed + static_cast<uint64_t>(i);
      out.requests.push_back(std::move(req));
    }
    out.prompt_tokens.push_back(static_cast<int32_t>(ids.size()));
  }
  return out;
}

// Usage over all choices: the prompt counts once per prompt, not once per choice.
struct UsageTally {
  Usage usage;
  void prompts(const std::vector<int32_t>& lens) {
    for (int32_t l : lens) usage.prompt_tokens += l;
  }
  void add(size_t index, int32_t n, const RequestOutput& ev) {
    if (!ev.finish) return;
    usage.completion_tokens += ev.completion_tokens;
    if (index % static_cast<size_t>(n) == 0) usage.cached_tokens += ev.cached_tokens;
  }
};

// When a response must be complete; the time point's max when --request-timeout is off.
std::chrono::steady_clock::time_point deadline_of(const ServingContext& ctx) {
  if (ctx.request_timeout.count() <= 0) return std::chrono::steady_clock::time_point::max();
  return std::chrono::steady_clock::now() + ctx.request_timeout;
}

ApiError timed_out(const ServingContext& ctx) {
  ApiError e;
  e.status = 408;
  e.type = "invalid_request_error";
  e.code = "request_timeout";
  e.message = "the request was still generating after " +
              std::to_string(ctx.request_timeout.count()) +
              " ms, the server's limit (--request-timeout); ask for fewer max_tokens";
  return e;
}

// An abort or engine error ends the response as an error instead of a finish reason.
std::optional<ApiError> failure_of(const RequestOutput& ev) {
  if (!ev.finish) return std::nullopt;
  ApiError e;
  if (*ev.finish == FinishReason::kAbort) {
    e.status = 503;
    e.type = "server_error";
    e.code = "aborted";
    e.message = "the request was aborted: the server is shutting down";
    e.retry_after_s = 5;
    return e;
  }
  if (*ev.finish == FinishReason::kError) {
    e.status = 500;
    e.type = "server_error";
    e.message = "generation failed: " + ev.finish_detail;
    return e;
  }
  return std::nullopt;
}

TokenBytes token_bytes_of(const std::shared_ptr<const ServingContext>& ctx) {
  return [tok = ctx->tokenizer](int32_t id) { return tok->token_bytes(id); };
}

void respond_whole(const std::shared_ptr<const ServingContext>& ctx, Prepared& p,
                   ChoiceStreams& streams, ConnectionWatch& watch, httplib::Response& res) {
  std::vector<ChoiceOutput> outs(streams.size());
  for (size_t i = 0; i < outs.size(); ++i) outs[i].index = static_cast<int32_t>(i);
  UsageTally tally;
  tally.prompts(p.prompt_tokens);
  std::optional<ApiError> failure;
  const auto deadline = deadline_of(*ctx);
  while (!streams.all_finished()) {
    // Returning destroys the streams, which cancels what is left of them.
    if (std::chrono::steady_clock::now() >= deadline) return send_error(res, timed_out(*ctx));
    if (watch.peer_gone()) {
      // Nobody will read the answer; returning destroys the streams, which cancels them.
      res.status = 499;
      return;
    }
    size_t i = 0;
    RequestOutput ev;
    if (!streams.next(&i, &ev, kPoll)) continue;
    outs[i].text += ev.text;
    outs[i].logprobs.insert(outs[i].logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
    tally.add(i, p.n, ev);
    if (auto f = failure_of(ev); f && !failure) failure = f;
    if (ev.finish) outs[i].finish_reason = finish_reason_name(*ev.finish);
  }
  if (failure) return send_error(res, *failure);
  if (p.reasoning) {
    for (auto& o : outs) {
      chat::ReasoningSplit split = chat::split_reasoning(*p.reasoning, p.chat_prompt, o.text);
      o.reasoning_parsed = true;
      o.reasoning = std::move(split.reasoning);
      o.text = split.content.value_or("");
    }
  }
  if (p.tools) {
    for (auto& o : outs) {
      chat::ToolCallSplit split = chat::split_tool_calls(*p.tools, o.text);
      o.tools_parsed = true;
      o.text = split.content.value_or("");
      o.tool_calls = std::move(split.calls);
      if (!o.tool_calls.empty() && o.finish_reason == "stop") o.finish_reason = "tool_calls";
    }
  }
  send_json(res, 200,
            completion_body(p.meta, outs, tally.usage, p.want_logprobs, token_bytes_of(ctx)));
}

// The state of one SSE response; httplib calls pump() until it calls sink.done().
struct StreamJob {
  std::shared_ptr<const ServingContext> ctx;
  Prepared p;
  ChoiceStreams streams;
  ConnectionWatch watch;
  TokenBytes bytes;
  std::vector<int64_t> text_offsets;
  // One streaming reasoning parser per choice when the server splits reasoning; a tag split
  // across events is held back until it is complete.
  std::vector<chat::ReasoningParser> parsers;
  // With tools: one tool-call parser per choice, fed the content the reasoning parser leaves.
  std::vector<chat::ToolCallParser> tool_parsers;
  UsageTally tally;
  bool opened = false;
  std::chrono::steady_clock::time_point deadline;

  StreamJob(std::shared_ptr<const ServingContext> c, Prepared prepared, ChoiceStreams s,
            ConnectionWatch w)
      : ctx(std::move(c)), p(std::move(prepared)), streams(std::move(s)), watch(w) {
    bytes = token_bytes_of(ctx);
    text_offsets.assign(streams.size(), 0);
    if (p.reasoning)
      parsers.assign(streams.size(), chat::ReasoningParser(*p.reasoning, p.chat_prompt));
    if (p.tools) tool_parsers.assign(streams.size(), chat::ToolCallParser(*p.tools));
    tally.prompts(p.prompt_tokens);
    deadline = deadline_of(*ctx);
  }

  std::string chunk(const ChunkDelta& d, int64_t* offset) const {
    return sse_event(stream_chunk(p.meta, d, p.include_usage, bytes, offset));
  }

  void append_event(size_t i, RequestOutput& ev, std::string* out) {
    tally.add(i, p.n, ev);
    ChunkDelta d;
    d.index = static_cast<int32_t>(i);
    if (parsers.empty()) {
      d.text = std::move(ev.text);
    } else {
      chat::ReasoningDelta split = parsers[i].feed(ev.text);
      if (ev.finish) {
        chat::ReasoningDelta rest = parsers[i].finish();
        split.reasoning += rest.reasoning;
        split.content += rest.content;
      }
      d.reasoning = std::move(split.reasoning);
      d.text = std::move(split.content);
    }
    bool made_calls = false;
    if (!tool_parsers.empty()) {
      chat::ToolStreamDelta calls = tool_parsers[i].feed(d.text);
      if (ev.finish) {
        chat::ToolStreamDelta rest = tool_parsers[i].finish();
        calls.content += rest.content;
        calls.calls.insert(calls.calls.end(), rest.calls.begin(), rest.calls.end());
      }
      d.text = std::move(calls.content);
      d.tool_calls = std::move(calls.calls);
      made_calls = !tool_parsers[i].calls().empty();
    }
    if (p.want_logprobs) d.logprobs = &ev.logprobs;
    bool has_tokens = !d.text.empty() || !d.reasoning.empty() || !d.tool_calls.empty() ||
                      (p.want_logprobs && !ev.logprobs.empty());
    std::optional<ApiError> failure = failure_of(ev);
    if (ev.finish && !failure) d.finish_reason = finish_name(ev, made_calls);
    if (has_tokens || d.finish_reason) *out += chunk(d, &text_offsets[i]);
    if (failure) *out += sse_event(error_json(*failure));
  }

  bool pump(httplib::DataSink& sink) {
    if (watch.peer_gone()) return false;  // httplib closes; our destructor cancels
    std::string out;
    bool done = false;
    if (!opened) {
      opened = true;
      // Chat streams open each choice with the assistant role, before any token exists, so a
      // client sees the response start at once.
      if (p.meta.endpoint == Endpoint::kChat) {
        for (size_t i = 0; i < streams.size(); ++i) {
          ChunkDelta d;
          d.index = static_cast<int32_t>(i);
          d.role_delta = true;
          out += chunk(d, &text_offsets[i]);
        }
      }
    } else {
      size_t i = 0;
      RequestOutput ev;
      // Several events per write when they are ready together (n > 1, a burst after a stall).
      for (int k = 0;
           k < 64 && streams.next(&i, &ev, k == 0 ? kPoll : std::chrono::milliseconds(0)); ++k) {
        append_event(i, ev, &out);
      }
      if (!streams.all_finished() && std::chrono::steady_clock::now() >= deadline) {
        // The job (and so its streams) is destroyed once the response ends: that cancels them.
        out += sse_event(error_json(timed_out(*ctx)));
        out += kSseDone;
        done = true;
      } else if (streams.all_finished()) {
        if (p.include_usage) out += sse_event(usage_chunk(p.meta, tally.usage));
        out += kSseDone;
        done = true;
      }
    }
    // An empty write would tell httplib the stream ended; only write when there is data.
    if (!out.empty() && !sink.write(out.data(), out.size())) return false;
    if (done) sink.done();
    return true;
  }
};

}  // namespace

void handle_completion(std::shared_ptr<const ServingContext> ctx, Endpoint endpoint,
                       const httplib::Request& req, const std::string& body,
                       httplib::Response& res) {
  auto prepared = prepare(*ctx, endpoint, body);
  if (auto* e = std::get_if<ApiError>(&prepared)) return send_error(res, *e);
  Prepared& p = std::get<Prepared>(prepared);

  ChoiceStreams streams;
  if (auto e = streams.submit(*ctx->engine, std::move(p.requests))) return send_error(res, *e);
  ConnectionWatch watch(req.local_addr, req.local_port, req.remote_addr, req.remote_port);

  if (!p.stream) return respond_whole(ctx, p, streams, watch, res);

  auto job = std::make_shared<StreamJob>(ctx, std::move(p), std::move(streams), watch);
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [job](size_t /*offset*/, httplib::DataSink& sink) { return job->pump(sink); });
}

}  // namespace ps
