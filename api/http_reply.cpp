#include "api/http_reply.h"

#include <httplib.h>

#include "http/sse.h"
#include "openai/openai_response.h"

namespace ps {

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) {
  if (error.retry_after_s > 0) res.set_header("Retry-After", std::to_string(error.retry_after_s));
  send_json(res, error.status, error_json(error));
}

}  // namespace ps
