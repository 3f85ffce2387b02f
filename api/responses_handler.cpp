#include "api/responses_handler.h"

#include <httplib.h>

#include <variant>

#include "api/generation.h"
#include "api/http_reply.h"
#include "api/streamed_reply.h"
#include "responses/response_events.h"
#include "responses/response_store.h"
#include "responses/responses_output.h"
#include "responses/responses_request.h"

namespace ps {
namespace {

using nlohmann::ordered_json;
using responses::ResponseHeader;
using responses::ResponsesRequest;

ApiError not_stored(const std::string& id, const char* param) {
  ApiError e;
  e.status = 404;
  e.param = param;
  e.code = "response_not_found";
  e.message = "no stored response '" + id +
              "': a response is stored only when its request sent \"store\": true, and is "
              "forgotten after --responses-store-ttl seconds or when --responses-store-size "
              "newer ones have been stored";
  return e;
}

// What a finished reply leaves behind with store: true: the response and the conversation a
// previous_response_id continues (the history, this request's input, the reply).
void store_reply(const ServingContext& ctx, const ResponsesRequest& r, ordered_json history,
                 const ChoiceOutput& reply, const nlohmann::json& response) {
  if (!r.store || !ctx.response_store) return;
  for (const auto& m : r.input_messages) history.push_back(m);
  history.push_back(responses::assistant_turn(reply));
  ctx.response_store->put(response["id"].get<std::string>(), {response, std::move(history)});
}

// A Responses stream: response.created, the output items' events, response.completed.
class ResponsesStream final : public StreamedReply {
 public:
  ResponsesStream(std::shared_ptr<const ServingContext> c, Prepared prepared, ChoiceStreams s,
                  ConnectionWatch w, ResponseHeader header, ResponsesRequest request,
                  ordered_json history)
      : StreamedReply(std::move(c), std::move(prepared), std::move(s), w),
        events_(std::move(header), request.summary),
        request_(std::move(request)),
        history_(std::move(history)) {}

 private:
  std::string opening() override { return events_.start(); }

  void on_event(size_t i, RequestOutput& ev, std::string* out) override {
    std::optional<ApiError> failure;
    ChunkDelta d = splitter_.split(i, ev, &failure);
    *out += events_.delta(d);
    if (failure) *out += events_.fail(*failure);
    if (d.finish_reason) {
      *out += events_.finish(*d.finish_reason, tally_.usage);
      store_reply(*ctx_, request_, std::move(history_), events_.reply(), events_.final_response());
    }
  }

  std::string on_all_finished() override { return ""; }  // the terminal event was the last
  std::string on_timeout(const ApiError& e) override { return events_.fail(e); }

  responses::ResponseEvents events_;
  ResponsesRequest request_;
  ordered_json history_;
};

}  // namespace

void handle_create_response(std::shared_ptr<const ServingContext> ctx, const httplib::Request& req,
                            const std::string& body, httplib::Response& res) {
  auto parsed = responses::parse_responses_request(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
  ResponsesRequest& r = std::get<ResponsesRequest>(parsed);
  if (r.store && (!ctx->response_store || ctx->response_store->capacity() == 0)) {
    return send_error(res, invalid_param("store",
                                         "'store' is true but this server stores no responses "
                                         "(--responses-store-size 0)"));
  }
  ordered_json history = ordered_json::array();
  if (r.previous_response_id) {
    auto prev =
        ctx->response_store ? ctx->response_store->get(*r.previous_response_id) : std::nullopt;
    if (!prev) return send_error(res, not_stored(*r.previous_response_id, "previous_response_id"));
    history = std::move(prev->conversation);
  }
  auto prepared = prepare(*ctx, Endpoint::kChat, responses::chat_body(r, history).dump());
  if (auto* e = std::get_if<ApiError>(&prepared)) {
    // The chat body's messages are this route's input (with the history and instructions).
    if (e->param == "messages") e->param = "input";
    return send_error(res, *e);
  }
  Prepared& p = std::get<Prepared>(prepared);
  p.meta.id = responses::new_id("resp_");
  ResponseHeader header{p.meta.id, p.meta.created, p.meta.model, r.echo, r.namespaces};

  ChoiceStreams streams;
  if (auto e = streams.submit(*ctx->engine, std::move(p.requests))) return send_error(res, *e);
  ConnectionWatch watch(req.local_addr, req.local_port, req.remote_addr, req.remote_port);

  if (!p.stream) {
    auto whole = collect_whole(*ctx, p, streams, watch);
    const WholeReply* reply = reply_or_answer(whole, res, send_error);
    if (!reply) return;
    const ChoiceOutput& choice = reply->choices[0];
    const char* status =
        responses::is_incomplete(choice.finish_reason) ? "incomplete" : "completed";
    nlohmann::json response = responses::response_object(
        header, status, responses::output_items(choice, r.summary, r.namespaces),
        responses::usage_body(reply->usage));
    store_reply(*ctx, r, std::move(history), choice, response);
    return send_json(res, 200, response);
  }
  respond_streamed(
      std::make_shared<ResponsesStream>(ctx, std::move(p), std::move(streams), watch,
                                        std::move(header), std::move(r), std::move(history)),
      res);
}

void handle_get_response(const ServingContext& ctx, const std::string& id, httplib::Response& res) {
  auto stored = ctx.response_store ? ctx.response_store->get(id) : std::nullopt;
  if (!stored) return send_error(res, not_stored(id, "response_id"));
  send_json(res, 200, stored->response);
}

void handle_delete_response(const ServingContext& ctx, const std::string& id,
                            httplib::Response& res) {
  if (!ctx.response_store || !ctx.response_store->erase(id)) {
    return send_error(res, not_stored(id, "response_id"));
  }
  send_json(res, 200, {{"id", id}, {"object", "response"}, {"deleted", true}});
}

}  // namespace ps
