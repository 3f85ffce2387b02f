#pragma once
// Writing JSON bodies and error bodies onto an httplib response: OpenAI's shape, Anthropic's
// (the /v1/messages routes), or the one the request's path belongs to.
#include <nlohmann/json.hpp>

#include "api/generation.h"
#include "openai/api_error.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ps {

void send_json(httplib::Response& res, int status, const nlohmann::json& body);
// The OpenAI error body, plus Retry-After when the error carries one.
void send_error(httplib::Response& res, const ApiError& error);
// Anthropic's error body {"type": "error", "error": {...}}, plus Retry-After likewise.
void send_anthropic_error(httplib::Response& res, const ApiError& error);
// An error answered before or outside a route's handler (auth, not ready, no route, body too
// large) in the shape of the API the path belongs to: Anthropic's under /v1/messages, else
// OpenAI's.
void send_route_error(const httplib::Request& req, httplib::Response& res, const ApiError& error);

// A whole (non-streamed) reply's outcome: the reply to render, or null once `res` holds the
// answer already (the error, written by `send` in the route's shape, or the 499 of a client
// that left: nobody reads it, and the streams are cancelled as the handler returns).
using ErrorSender = void (*)(httplib::Response&, const ApiError&);
const WholeReply* reply_or_answer(const std::variant<WholeReply, ApiError, PeerGone>& whole,
                                  httplib::Response& res, ErrorSender send);

}  // namespace ps
