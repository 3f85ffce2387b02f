#pragma once
// HttpServer's state (http_server.h), shared by its two files: http_server.cpp sets up the
// transport, the gate before every route (auth, CORS, not ready) and the completion and LoRA
// routes; utility_routes.cpp answers health, models, tokenize, detokenize and metrics. Internal
// to api/.
#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "api/http_reply.h"
#include "api/http_server.h"
#include "http/edge_server.h"
#include "metrics/metrics_text.h"
#include "openai/api_error.h"

namespace ps {

struct HttpServer::Impl {
  explicit Impl(ServerOptions o);
  ServerOptions options;
  EdgeServer server;
  std::mutex mu;
  std::shared_ptr<const ServingContext> context;  // null while loading
  std::atomic<bool> shutting_down{false};
  std::atomic<bool> run_started{false}, run_returned{false}, stop_requested{false};
  std::atomic<int> listen_fd{-1};  // the listening socket, to raise its accept backlog
  HttpCounters counters;
  int64_t started = 0;

  ApiError body_too_large(uint64_t size) const {
    ApiError e;
    e.status = 413;
    e.code = "body_too_large";
    e.message = "request body is " + std::to_string(size) + " bytes; the limit is " +
                std::to_string(options.max_body_bytes) + " (--max-body-bytes)";
    return e;
  }
  // POST routes read the body themselves: httplib would otherwise parse a body sent as a form
  // (curl -d without a Content-Type) and refuse it past 8 KiB, and the pre-routing handler runs
  // before any body is read, so the size limit is checked here.
  using PostHandler =
      std::function<void(const httplib::Request&, const std::string& body, httplib::Response&)>;
  void post(const char* pattern, PostHandler fn) {
    server.Post(pattern,
                [this, fn = std::move(fn)](const httplib::Request& req, httplib::Response& res,
                                           const httplib::ContentReader& reader) {
                  std::string body;
                  size_t total = 0;
                  // Past the limit we keep reading (httplib caps it at twice the limit) but keep
                  // nothing, so the client gets a clean 413 instead of a reset connection.
                  bool read = reader([&](const char* data, size_t len) {
                    total += len;
                    if (total <= options.max_body_bytes) body.append(data, len);
                    return true;
                  });
                  if (!read)
                    return;  // httplib has set the status (413 past its own cap, 400 otherwise)
                  if (total > options.max_body_bytes) {
                    return send_route_error(req, res, body_too_large(total));
                  }
                  fn(req, body, res);
                });
  }

  std::shared_ptr<const ServingContext> ctx() {
    std::lock_guard<std::mutex> lock(mu);
    return context;
  }

  void setup();
  httplib::Server::HandlerResponse pre_route(const httplib::Request& req, httplib::Response& res);
  void health(httplib::Response& res);
  void models(httplib::Response& res);
  void tokenize(const std::string& body, httplib::Response& res);
  void detokenize(const std::string& body, httplib::Response& res);
  void metrics(httplib::Response& res);
  // With --kv-events-config: {"block_hashes": [...], "last_event_seq": N}, the prefix cache's
  // keys and the last event batch that describes them (a subscriber's check); else 404.
  void kv_cache_blocks(httplib::Response& res);
  static void admin_reply(httplib::Response& res,
                          const std::variant<nlohmann::json, ApiError>& reply) {
    if (auto* e = std::get_if<ApiError>(&reply)) return send_error(res, *e);
    send_json(res, 200, std::get<nlohmann::json>(reply));
  }
};

}  // namespace ps
