#include "api/http_reply.h"

#include <httplib.h>

#include "anthropic/messages_response.h"
#include "http/sse.h"
#include "openai/openai_response.h"

namespace ps {

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

namespace {

void send_error_body(httplib::Response& res, const ApiError& error, const nlohmann::json& body) {
  if (error.retry_after_s > 0) res.set_header("Retry-After", std::to_string(error.retry_after_s));
  send_json(res, error.status, body);
}

}  // namespace

void send_error(httplib::Response& res, const ApiError& error) {
  send_error_body(res, error, error_json(error));
}

void send_anthropic_error(httplib::Response& res, const ApiError& error) {
  send_error_body(res, error, anthropic::error_body(error));
}

void send_route_error(const httplib::Request& req, httplib::Response& res, const ApiError& error) {
  if (req.path.rfind("/v1/messages", 0) == 0) return send_anthropic_error(res, error);
  send_error(res, error);
}

const WholeReply* reply_or_answer(const std::variant<WholeReply, ApiError, PeerGone>& whole,
                                  httplib::Response& res, ErrorSender send) {
  if (auto* e = std::get_if<ApiError>(&whole)) {
    send(res, *e);
    return nullptr;
  }
  if (std::holds_alternative<PeerGone>(whole)) {
    res.status = 499;
    return nullptr;
  }
  return &std::get<WholeReply>(whole);
}

}  // namespace ps
