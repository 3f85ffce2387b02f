#include "api/completion_handler.h"

#include <httplib.h>

#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include "api/generation.h"
#include "api/http_reply.h"
#include "api/streamed_reply.h"
#include "http/connection_watch.h"
#include "http/sse.h"
#include "openai/choice_streams.h"
#include "openai/openai_response.h"

namespace ps {
namespace {

void respond_whole(const std::shared_ptr<const ServingContext>& ctx, Prepared& p,
                   ChoiceStreams& streams, ConnectionWatch& watch, httplib::Response& res) {
  auto whole = collect_whole(*ctx, p, streams, watch);
  const WholeReply* reply = reply_or_answer(whole, res, send_error);
  if (!reply) return;
  send_json(
      res, 200,
      completion_body(p.meta, reply->choices, reply->usage, p.want_logprobs, token_bytes_of(ctx)));
}

// An OpenAI stream: chat.completion.chunk / text_completion chunks, then data: [DONE].
class OpenAiStream final : public StreamedReply {
 public:
  OpenAiStream(std::shared_ptr<const ServingContext> c, Prepared prepared, ChoiceStreams s,
               ConnectionWatch w)
      : StreamedReply(std::move(c), std::move(prepared), std::move(s), w),
        bytes_(token_bytes_of(ctx_)),
        text_offsets_(streams_.size(), 0),
        prompt_sent_(streams_.size(), false) {}

 private:
  std::string chunk(const ChunkDelta& d, int64_t* offset) const {
    return sse_event(stream_chunk(p_.meta, d, p_.include_usage, bytes_, offset));
  }

  // Chat streams open each choice with the assistant role, before any token exists.
  std::string opening() override {
    std::string out;
    if (p_.meta.endpoint != Endpoint::kChat) return out;
    for (size_t i = 0; i < streams_.size(); ++i) {
      ChunkDelta d;
      d.index = static_cast<int32_t>(i);
      d.role_delta = true;
      out += chunk(d, &text_offsets_[i]);
    }
    return out;
  }

  void on_event(size_t i, RequestOutput& ev, std::string* out) override {
    std::optional<ApiError> failure;
    // A choice's first event brings its prompt side (echo, prompt_logprobs) along.
    std::optional<PromptSide> prompt;
    if (!prompt_sent_[i]) {
      prompt_sent_[i] = true;
      prompt = prompt_side_of(p_, i, ev);
    }
    ChunkDelta d = splitter_.split(i, ev, &failure);
    if (p_.want_logprobs) d.logprobs = &ev.logprobs;
    if (prompt) d.prompt = &*prompt;
    bool has_tokens = !d.text.empty() || !d.reasoning.empty() || !d.tool_calls.empty() ||
                      (p_.want_logprobs && !ev.logprobs.empty()) || prompt;
    if (has_tokens || d.finish_reason) *out += chunk(d, &text_offsets_[i]);
    if (failure) *out += sse_event(error_json(*failure));
  }

  std::string on_all_finished() override {
    std::string out;
    if (p_.include_usage) out += sse_event(usage_chunk(p_.meta, tally_.usage));
    out += kSseDone;
    return out;
  }

  std::string on_timeout(const ApiError& e) override {
    std::string out = sse_event(error_json(e));
    out += kSseDone;
    return out;
  }

  TokenBytes bytes_;
  std::vector<int64_t> text_offsets_;
  std::vector<bool> prompt_sent_;
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

  respond_streamed(std::make_shared<OpenAiStream>(ctx, std::move(p), std::move(streams), watch),
                   res);
}

}  // namespace ps
