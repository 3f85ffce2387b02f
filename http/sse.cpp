#include "http/sse.h"

namespace ps {

std::string dump_json(const nlohmann::json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

std::string sse_event(const nlohmann::json& j) {
  return "data: " + dump_json(j) + "\n\n";
}

}  // namespace ps
