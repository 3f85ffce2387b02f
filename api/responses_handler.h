#pragma once
// POST /v1/responses, GET and DELETE /v1/responses/{id} (OpenAI's Responses API): the body is
// translated into the chat route's OpenAI form (responses/responses_request.h), joined to the
// stored conversation of previous_response_id, and run through the same pipeline
// (api/generation.h); the reply and its stream take the Responses shapes
// (responses/responses_output.h, responses/response_events.h); with store: true the response
// and its conversation are kept in the context's bounded store.
#include <memory>
#include <string>

#include "api/serving_context.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ps {

void handle_create_response(std::shared_ptr<const ServingContext> ctx, const httplib::Request& req,
                            const std::string& body, httplib::Response& res);

void handle_get_response(const ServingContext& ctx, const std::string& id, httplib::Response& res);

void handle_delete_response(const ServingContext& ctx, const std::string& id,
                            httplib::Response& res);

}  // namespace ps
