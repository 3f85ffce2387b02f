#pragma once
// Writing JSON bodies and OpenAI error bodies onto an httplib response.
#include <nlohmann/json.hpp>

#include "openai/api_error.h"

namespace httplib {
struct Response;
}

namespace ps {

void send_json(httplib::Response& res, int status, const nlohmann::json& body);
// The OpenAI error body, plus Retry-After when the error carries one.
void send_error(httplib::Response& res, const ApiError& error);

}  // namespace ps
