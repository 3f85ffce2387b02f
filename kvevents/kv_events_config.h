#pragma once
// --kv-events-config, spelled as vLLM's KVEventsConfig (a JSON object): whether events are on,
// the publisher, where it binds, and how much it keeps.
#include <cstddef>
#include <optional>
#include <string>

namespace ps {

struct KvEventsConfig {
  bool enabled = false;                   // enable_kv_cache_events
  std::string publisher;                  // "zmq" | "null" (vLLM's default: "zmq" when enabled)
  std::string endpoint = "tcp://*:5557";  // the PUB socket
  std::optional<std::string> replay_endpoint;  // the ROUTER socket for replays (none: no replay)
  std::string topic;                           // the first frame of every message
  size_t buffer_steps = 10000;                 // batches kept for replay
  int hwm = 100000;                // ZMQ send high-water mark: a slow subscriber's messages past
                                   // it are dropped by ZMQ, never waited for
  size_t max_queue_size = 100000;  // batches waiting for the publisher thread; past it, dropped
};

// Parses the flag's JSON. Throws std::invalid_argument whose message names the field (or says
// the text is not a JSON object); unknown fields are errors, so a typo is not silently ignored.
KvEventsConfig parse_kv_events_config(const std::string& json_text);

}  // namespace ps
