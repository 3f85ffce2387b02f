#pragma once
// An error a client caused (or an overload), carried to the HTTP layer as an OpenAI-style body
// {"error": {"message", "type", "param", "code"}} with its status (docs/architecture.md §6).
#include <string>
#include <utility>

namespace ps {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;      // empty: null in the body
  std::string code;       // empty: null in the body
  int retry_after_s = 0;  // > 0: sent as a Retry-After header (429, 503)
};

// The offending field is named in both the message and `param`, so a client can fix its input.
inline ApiError invalid_param(std::string param, std::string message) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  return e;
}

}  // namespace ps
