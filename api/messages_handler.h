#pragma once
// POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API): the body is
// translated into the chat route's OpenAI form (anthropic/messages_request.h) and run through
// the same pipeline (api/generation.h); the reply, its stream and every error take Anthropic's
// shapes (anthropic/messages_response.h).
#include <memory>
#include <string>

#include "api/serving_context.h"
#include "openai/api_error.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ps {

void handle_messages(std::shared_ptr<const ServingContext> ctx, const httplib::Request& req,
                     const std::string& body, httplib::Response& res);

void handle_count_tokens(const ServingContext& ctx, const std::string& body,
                         httplib::Response& res);

// An error answered before or outside a route's handler (auth, not ready, no route, body too
// large) in the shape of the API the path belongs to: Anthropic's under /v1/messages, else
// OpenAI's.
void send_route_error(const httplib::Request& req, httplib::Response& res, const ApiError& e);

}  // namespace ps
