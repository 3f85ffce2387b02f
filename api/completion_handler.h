#pragma once
// POST /v1/chat/completions and /v1/completions: validate, tokenize, submit one engine request
// per choice, then answer with one JSON body or an SSE stream. The handler thread only talks to
// the engine through Engine::submit and RequestStream (docs/architecture.md §1).
#include <memory>
#include <string>

#include "api/serving_context.h"
#include "openai/openai_request.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ps {

// `body`: the request body, read by the caller (which enforces the size limit).
void handle_completion(std::shared_ptr<const ServingContext> ctx, Endpoint endpoint,
                       const httplib::Request& req, const std::string& body,
                       httplib::Response& res);

}  // namespace ps
