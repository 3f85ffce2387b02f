#pragma once
// POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API): the body is
// translated into the chat route's OpenAI form (anthropic/messages_request.h) and run through
// the same pipeline (api/generation.h); the reply, its stream and every error take Anthropic's
// shapes (anthropic/messages_response.h).
#include <memory>
#include <string>

#include "api/serving_context.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ps {

void handle_messages(std::shared_ptr<const ServingContext> ctx, const httplib::Request& req,
                     const std::string& body, httplib::Response& res);

void handle_count_tokens(const ServingContext& ctx, const std::string& body,
                         httplib::Response& res);

}  // namespace ps
