#include "api/messages_handler.h"

#include <httplib.h>

#include <variant>

#include "anthropic/messages_request.h"
#include "anthropic/messages_response.h"
#include "api/generation.h"
#include "api/http_reply.h"
#include "api/streamed_reply.h"
#include "openai/chat_messages.h"

namespace ps {
namespace {

using anthropic::MessageStream;

// A Messages stream: message_start, the content blocks' events, message_delta, message_stop.
class MessagesStream final : public StreamedReply {
 public:
  MessagesStream(std::shared_ptr<const ServingContext> c, Prepared prepared, ChoiceStreams s,
                 ConnectionWatch w)
      : StreamedReply(std::move(c), std::move(prepared), std::move(s), w),
        events_(p_.meta.id, p_.meta.model) {}

 private:
  std::string opening() override {
    Usage prompt;
    prompt.prompt_tokens = p_.prompt_tokens.empty() ? 0 : p_.prompt_tokens[0];
    return events_.start(prompt);
  }

  // One engine event: its deltas, then (on the last) the message's end or its error.
  void on_event(size_t i, RequestOutput& ev, std::string* out) override {
    std::optional<ApiError> failure;
    ChunkDelta d = splitter_.split(i, ev, &failure);
    *out += events_.delta(d);
    if (failure) *out += events_.error(*failure);
    if (d.finish_reason) {
      const std::string stop = *ev.finish == FinishReason::kStop ? ev.finish_detail : "";
      *out += events_.finish(*d.finish_reason, stop, tally_.usage);
    }
  }

  std::string on_all_finished() override { return ""; }  // message_stop was the last event
  std::string on_timeout(const ApiError& e) override { return events_.error(e); }

  MessageStream events_;
};

}  // namespace

void handle_messages(std::shared_ptr<const ServingContext> ctx, const httplib::Request& req,
                     const std::string& body, httplib::Response& res) {
  auto chat = anthropic::translate_messages_request(body, anthropic::MessagesRoute::kCreate);
  if (auto* e = std::get_if<ApiError>(&chat)) return send_anthropic_error(res, *e);
  auto prepared = prepare(*ctx, Endpoint::kChat, std::get<nlohmann::json>(chat).dump());
  if (auto* e = std::get_if<ApiError>(&prepared)) return send_anthropic_error(res, *e);
  Prepared& p = std::get<Prepared>(prepared);
  p.meta.id = anthropic::new_message_id();

  ChoiceStreams streams;
  if (auto e = streams.submit(*ctx->engine, std::move(p.requests))) {
    return send_anthropic_error(res, *e);
  }
  ConnectionWatch watch(req.local_addr, req.local_port, req.remote_addr, req.remote_port);

  if (!p.stream) {
    auto whole = collect_whole(*ctx, p, streams, watch);
    const WholeReply* reply = reply_or_answer(whole, res, send_anthropic_error);
    if (!reply) return;
    return send_json(res, 200,
                     anthropic::message_body(p.meta.id, p.meta.model, reply->choices[0],
                                             reply->stop_strings[0], reply->usage));
  }
  respond_streamed(std::make_shared<MessagesStream>(ctx, std::move(p), std::move(streams), watch),
                   res);
}

void handle_count_tokens(const ServingContext& ctx, const std::string& body,
                         httplib::Response& res) {
  auto chat = anthropic::translate_messages_request(body, anthropic::MessagesRoute::kCountTokens);
  if (auto* e = std::get_if<ApiError>(&chat)) return send_anthropic_error(res, *e);
  auto parsed =
      parse_openai_request(std::get<nlohmann::json>(chat).dump(), Endpoint::kChat, ctx.limits);
  if (auto* e = std::get_if<ApiError>(&parsed)) return send_anthropic_error(res, *e);
  auto rendered = render_prompt(*ctx.chat_renderer, std::get<OpenAiRequest>(parsed).chat);
  if (auto* e = std::get_if<ApiError>(&rendered)) return send_anthropic_error(res, *e);
  const size_t n = ctx.tokenizer->encode(std::get<std::string>(rendered)).size();
  send_json(res, 200, {{"input_tokens", n}});
}

}  // namespace ps
