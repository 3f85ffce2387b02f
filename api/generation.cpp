#include "api/generation.h"

#include "api/lora_admin.h"
#include "openai/chat_messages.h"
#include "openai/constraint_builder.h"

namespace ps {

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
                         "with --tool-call-parser hermes|llama3_json|mistral|harmony");
  }

  if (r.tools.active() && ctx.tool_parser == chat::ToolCallFormat::kHarmony &&
      r.tools.choice != ToolChoice::kAuto) {
    return invalid_param("tool_choice",
                         "a harmony model (gpt-oss) chooses its own tool calls: only \"auto\" "
                         "(or \"none\") is supported with this chat template");
  }
  if (r.tools.active() && ctx.tool_parser == chat::ToolCallFormat::kQwen3Xml &&
      r.tools.choice != ToolChoice::kAuto) {
    return invalid_param("tool_choice",
                         "qwen3_coder tool calls (<function=...> XML) are not constrained by a "
                         "grammar here: only \"auto\" (or \"none\") is supported");
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
  // Harmony's channel markers are special tokens: its parsers read them and take them out.
  const bool harmony = ctx.reasoning == chat::ReasoningStyle::kHarmony ||
                       (r.tools.active() && ctx.tool_parser == chat::ToolCallFormat::kHarmony);
  for (auto& ids : prompts) {
    if (ids.empty()) {
      return invalid_param(endpoint == Endpoint::kChat ? "messages" : "prompt",
                           "the prompt encodes to no tokens");
    }
    SamplingParams params = r.params;
    if (endpoint == Endpoint::kChat && harmony) params.skip_special_tokens = false;
    if (auto e = fit_to_context(endpoint, static_cast<int32_t>(ids.size()), ctx.max_model_len,
                                r.max_tokens_given, &params)) {
      return *e;
    }
    const auto now = std::chrono::steady_clock::now();
    const auto after = [now](std::optional<double> s) {
      if (!s) return std::chrono::steady_clock::time_point::max();
      return now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(*s));
    };
    params.n = 1;  // the engine runs one sequence per request; choices are separate requests
    params.grammar = grammar;  // each choice gets its own matcher in the engine
    for (int32_t i = 0; i < r.params.n; ++i) {
      Request req{ids, params};
      req.lora = lora;
      req.priority = r.scheduling.priority;
      req.queue_deadline = after(r.scheduling.queue_seconds);
      req.deadline = after(r.scheduling.total_seconds);
      // Seeded choices differ from each other yet are each reproducible.
      if (r.params.seed) req.params.seed = *r.params.seed + static_cast<uint64_t>(i);
      out.requests.push_back(std::move(req));
    }
    out.prompt_tokens.push_back(static_cast<int32_t>(ids.size()));
    if (r.echo || r.want_prompt_logprobs) {
      PromptSide side;
      side.echo = r.echo;
      side.with_logprobs = r.want_prompt_logprobs;
      // The prompt as sent: a text prompt's own text, an id prompt decoded.
      const size_t k = out.prompt_sides.size();
      const bool text = endpoint == Endpoint::kCompletion && !r.prompts[k].is_ids;
      side.text = text ? r.prompts[k].text : ctx.tokenizer->decode(ids);
      side.ids = ids;
      out.prompt_sides.push_back(std::move(side));
    }
  }
  return out;
}

std::optional<PromptSide> prompt_side_of(const Prepared& p, size_t i, RequestOutput& ev) {
  if (p.prompt_sides.empty()) return std::nullopt;
  PromptSide side = p.prompt_sides[i / static_cast<size_t>(p.n)];
  side.logprobs = std::move(ev.prompt_logprobs);
  return side;
}

std::string finish_name(const RequestOutput& ev, bool made_calls) {
  if (made_calls && *ev.finish == FinishReason::kStop) return "tool_calls";
  return finish_reason_name(*ev.finish);
}

void UsageTally::prompts(const std::vector<int32_t>& lens) {
  for (int32_t l : lens) usage.prompt_tokens += l;
}

void UsageTally::add(size_t index, int32_t n, const RequestOutput& ev) {
  if (!ev.finish) return;
  usage.completion_tokens += ev.completion_tokens;
  if (index % static_cast<size_t>(n) == 0) usage.cached_tokens += ev.cached_tokens;
}

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
  if (*ev.finish == FinishReason::kQueueTimeout) {
    // Refused before it took any block: another replica (or a later try) may serve it sooner.
    e.status = 503;
    e.type = "server_error";
    e.code = "queue_timeout";
    e.message =
        "the request waited in the queue past its deadline (max_queue_seconds, or the server's "
        "--max-queue-seconds) and was not started; retry later or on another replica";
    e.retry_after_s = 1;
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

std::variant<WholeReply, ApiError, PeerGone> collect_whole(const ServingContext& ctx,
                                                           const Prepared& p,
                                                           ChoiceStreams& streams,
                                                           ConnectionWatch& watch) {
  WholeReply reply;
  std::vector<ChoiceOutput>& outs = reply.choices;
  outs.resize(streams.size());
  reply.stop_strings.resize(streams.size());
  for (size_t i = 0; i < outs.size(); ++i) outs[i].index = static_cast<int32_t>(i);
  UsageTally tally;
  tally.prompts(p.prompt_tokens);
  std::optional<ApiError> failure;
  const auto deadline = deadline_of(ctx);
  while (!streams.all_finished()) {
    // Returning destroys nothing here: the caller's streams are cancelled when it returns.
    if (std::chrono::steady_clock::now() >= deadline) return timed_out(ctx);
    if (watch.peer_gone()) return PeerGone{};
    size_t i = 0;
    RequestOutput ev;
    if (!streams.next(&i, &ev, kPoll)) continue;
    if (!outs[i].prompt.any()) {  // the first event of choice i
      if (auto side = prompt_side_of(p, i, ev)) outs[i].prompt = std::move(*side);
    }
    outs[i].text += ev.text;
    outs[i].logprobs.insert(outs[i].logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
    tally.add(i, p.n, ev);
    if (auto f = failure_of(ev); f && !failure) failure = f;
    if (ev.finish) {
      outs[i].finish_reason = finish_reason_name(*ev.finish);
      if (*ev.finish == FinishReason::kStop) reply.stop_strings[i] = ev.finish_detail;
    }
  }
  if (failure) return *failure;
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
  reply.usage = tally.usage;
  return reply;
}

ReplySplitter::ReplySplitter(const Prepared& p, size_t choices) {
  if (p.reasoning) parsers_.assign(choices, chat::ReasoningParser(*p.reasoning, p.chat_prompt));
  if (p.tools) tool_parsers_.assign(choices, chat::ToolCallParser(*p.tools));
}

ChunkDelta ReplySplitter::split(size_t i, RequestOutput& ev, std::optional<ApiError>* failure) {
  ChunkDelta d;
  d.index = static_cast<int32_t>(i);
  if (parsers_.empty()) {
    d.text = std::move(ev.text);
  } else {
    chat::ReasoningDelta split = parsers_[i].feed(ev.text);
    if (ev.finish) {
      chat::ReasoningDelta rest = parsers_[i].finish();
      split.reasoning += rest.reasoning;
      split.content += rest.content;
    }
    d.reasoning = std::move(split.reasoning);
    d.text = std::move(split.content);
  }
  bool made_calls = false;
  if (!tool_parsers_.empty()) {
    chat::ToolStreamDelta calls = tool_parsers_[i].feed(d.text);
    if (ev.finish) {
      chat::ToolStreamDelta rest = tool_parsers_[i].finish();
      calls.content += rest.content;
      calls.calls.insert(calls.calls.end(), rest.calls.begin(), rest.calls.end());
    }
    d.text = std::move(calls.content);
    d.tool_calls = std::move(calls.calls);
    made_calls = !tool_parsers_[i].calls().empty();
  }
  *failure = failure_of(ev);
  if (ev.finish && !*failure) d.finish_reason = finish_name(ev, made_calls);
  return d;
}

}  // namespace ps
