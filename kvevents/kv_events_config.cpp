#include "kvevents/kv_events_config.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ps {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw std::invalid_argument("field '" + field + "' " + what);
}

std::string string_of(const json& v, const std::string& field) {
  if (!v.is_string()) bad(field, "must be a string, got " + v.dump());
  return v.get<std::string>();
}

size_t count_of(const json& v, const std::string& field, size_t least) {
  if (!v.is_number_integer() || v.get<int64_t>() < static_cast<int64_t>(least) ||
      v.get<int64_t>() > (int64_t{1} << 30)) {
    bad(field, "must be an integer from " + std::to_string(least) + " to 2^30, got " + v.dump());
  }
  return static_cast<size_t>(v.get<int64_t>());
}

}  // namespace

KvEventsConfig parse_kv_events_config(const std::string& json_text) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception&) {
    throw std::invalid_argument("is not JSON: " + json_text);
  }
  if (!j.is_object()) throw std::invalid_argument("must be a JSON object, got " + j.dump());
  KvEventsConfig c;
  bool publisher_given = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "enable_kv_cache_events") {
      if (!v.is_boolean()) bad(key, "must be true or false, got " + v.dump());
      c.enabled = v.get<bool>();
    } else if (key == "publisher") {
      if (v.is_null()) continue;
      c.publisher = string_of(v, key);
      if (c.publisher != "zmq" && c.publisher != "null") {
        bad(key, "must be \"zmq\" or \"null\", got \"" + c.publisher + "\"");
      }
      publisher_given = true;
    } else if (key == "endpoint") {
      c.endpoint = string_of(v, key);
    } else if (key == "replay_endpoint") {
      if (!v.is_null()) c.replay_endpoint = string_of(v, key);
    } else if (key == "topic") {
      c.topic = string_of(v, key);
    } else if (key == "buffer_steps") {
      c.buffer_steps = count_of(v, key, 1);
    } else if (key == "hwm") {
      c.hwm = static_cast<int>(count_of(v, key, 0));
    } else if (key == "max_queue_size") {
      c.max_queue_size = count_of(v, key, 1);
    } else {
      bad(key,
          "is not a KV-events setting (known: enable_kv_cache_events, publisher, endpoint, "
          "replay_endpoint, topic, buffer_steps, hwm, max_queue_size)");
    }
  }
  if (!publisher_given) c.publisher = c.enabled ? "zmq" : "null";
  if (c.endpoint.empty()) bad("endpoint", "must not be empty");
  return c;
}

}  // namespace ps
