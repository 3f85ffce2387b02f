#pragma once
// The OpenAI-compatible HTTP server: routes, auth, body limit, health and metrics. It listens
// before the model is loaded (so /health can say 503 while loading) and serves once
// set_context() hands it the engine.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "api/serving_context.h"

namespace ps {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8000;                 // 0 picks a free port (bind() returns it)
  std::string api_key;             // non-empty: /v1 routes need "Authorization: Bearer KEY"
  size_t max_body_bytes = 1 << 20;
  // Threads that serve requests. A request holds one from the moment its head has arrived until
  // its response ends (a stream: its whole generation); connections that are idle or still
  // sending their head hold none (http/edge_server.h). More requests than this wait for a thread
  // (counted in the waiting gauges of /metrics).
  int http_threads = 512;
  int header_timeout_s = 5;            // a request head must arrive within this of its first byte
  int body_timeout_s = 30;             // and its body within this of the head
  int keep_alive_timeout_s = 75;       // idle keep-alive; must outlast a proxy's (nginx: 60 s)
  int max_connections = 8192;          // open connections in all (over it: 503); lowered to fit the
                                       // open-file limit
  int max_connections_per_client = 0;  // per client address (over it: 429); 0: no cap
  // With an api_key: /health and /metrics need it too (else they stay open for probes).
  bool key_for_health_metrics = false;
  // Origins a browser page may call this server from (CORS); empty: none, "*": any.
  std::vector<std::string> allowed_origins;
};

class HttpServer {
 public:
  explicit HttpServer(ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; returns the port. Throws std::runtime_error naming host:port.
  int bind();
  // The model is loaded: /health turns 200 and /v1 routes serve.
  void set_context(std::shared_ptr<const ServingContext> context);
  // Accepts connections until stop(). Call after bind(), on its own thread if need be.
  void run();
  // New requests get 503 (and /health 503) while in-flight ones finish.
  void begin_shutdown();
  // Waits (at most `bound`) until no worker is serving a request. After the engine has ended
  // every stream, their handlers still have to write the last event and the terminal chunk:
  // stop() ends chunked writers where they stand, so a stream cut there reaches the client as
  // a connection closed inside its body, with no error event.
  void wait_for_responses(std::chrono::milliseconds bound);
  // Closes the listening socket; run() returns once in-flight connections are done.
  void stop();
  // The connection cap in force (max_connections, lowered to fit the open-file limit at bind()).
  int max_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
