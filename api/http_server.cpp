// The OpenAI-compatible server (http_server.h): the transport's setup, the gate before every
// route (auth, CORS, not ready), the completion and LoRA admin routes, and the server's life
// (bind, run, drain, stop). The small routes are utility_routes.cpp's.
#include "api/http_server.h"

#include <httplib.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <variant>

#include "api/completion_handler.h"
#include "api/http_reply.h"
#include "api/http_server_impl.h"
#include "api/lora_admin.h"
#include "api/messages_handler.h"
#include "api/responses_handler.h"
#include "http/edge_server.h"
#include "http/static_page.h"
#include "metrics/metrics_text.h"
#include "metrics/router_metrics.h"
#include "openai/chat_messages.h"
#include "openai/openai_response.h"

namespace ps {
namespace {

ApiError unavailable(std::string message, std::string code) {
  ApiError e;
  e.status = 503;
  e.type = "server_error";
  e.code = std::move(code);
  e.message = std::move(message);
  e.retry_after_s = 1;
  return e;
}

// Compares without an early exit, so response timing does not reveal a prefix of the key.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

bool origin_allowed(const std::vector<std::string>& allowed, const std::string& origin) {
  if (origin.empty()) return false;
  for (const auto& a : allowed) {
    if (a == "*" || a == origin) return true;
  }
  return false;
}

EdgeOptions edge_options(const ServerOptions& o) {
  EdgeOptions e;
  e.workers = std::max(4, o.http_threads);
  e.header_timeout_s = o.header_timeout_s;
  e.body_timeout_s = o.body_timeout_s;
  e.keep_alive_timeout_s = o.keep_alive_timeout_s;
  e.max_connections = o.max_connections;
  e.max_connections_per_client = o.max_connections_per_client;
  return e;
}

// Each connection is a file descriptor; a soft limit of 1024 (a common default) would refuse
// clients long before the connection cap. Raises the soft limit to the hard one and returns it.
rlim_t raise_open_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit want = lim;
    want.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) lim = want;
  }
  return lim.rlim_cur;
}

bool needs_model(const std::string& path) {
  return path.rfind("/v1/", 0) == 0 || path == "/tokenize" || path == "/detokenize";
}

}  // namespace

HttpServer::Impl::Impl(ServerOptions o) : options(std::move(o)), server(edge_options(options)) {}

void HttpServer::Impl::setup() {
  // Worker threads, keep-alive and the header deadline belong to the edge (http/edge_server.h).
  server.set_tcp_nodelay(true);  // SSE chunks are small; Nagle would delay each token
  // Replaces httplib's default socket options (SO_REUSEADDR, kept) to remember the listening
  // socket: bind() raises its backlog from httplib's built-in 5, which overflowed when 64
  // clients connected at once (dropped handshakes, then failed reads on the client side).
  server.set_socket_options([this](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd.store(sock);
  });
  // httplib drops oversized bodies itself only past twice our limit; between the two we read the
  // body and answer a clean 413, so a client that sent it can still read the answer.
  server.set_payload_max_length(options.max_body_bytes * 2 + 65536);
  server.set_expect_100_continue_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        // Refusing before the client sends the body keeps the connection clean. httplib 0.11
        // writes `res` as it is here, so the status and body must be set, not just returned.
        uint64_t len = std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10);
        if (len <= options.max_body_bytes) return 100;
        send_route_error(req, res, body_too_large(len));
        return 413;
      });
  server.set_pre_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) { return pre_route(req, res); });
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler already wrote its own error body
    ApiError e;
    e.status = res.status;
    if (res.status == 404) {
      e.message = "no route for " + req.method + " " + req.path;
      e.code = "not_found";
    } else if (res.status == 413) {
      e.message = "request body is too large";
      e.code = "body_too_large";
    } else {
      e.message = "bad request (HTTP " + std::to_string(res.status) + ")";
      if (res.status >= 500) e.type = "server_error";
    }
    send_route_error(req, res, e);
  });
  server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        // Reaching here is a bug of ours, not the client's: say so, keep serving.
        std::string what = "unknown exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        std::fprintf(stderr, "pagedserve: internal error on %s %s: %s\n", req.method.c_str(),
                     req.path.c_str(), what.c_str());
        ApiError e;
        e.status = 500;
        e.type = "server_error";
        e.message = "internal error: " + what;
        send_route_error(req, res, e);
      });
  server.set_logger([this](const httplib::Request&, const httplib::Response& res) {
    counters.count(res.status);
  });

  add_static_routes(server);  // the web chat page at /
  server.Get("/health", [this](const httplib::Request&, httplib::Response& res) { health(res); });
  server.Get("/v1/models",
             [this](const httplib::Request&, httplib::Response& res) { models(res); });
  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) { metrics(res); });
  server.Get("/debug/kv-cache/blocks",
             [this](const httplib::Request&, httplib::Response& res) { kv_cache_blocks(res); });
  post("/v1/chat/completions",
       [this](const httplib::Request& req, const std::string& body, httplib::Response& res) {
         handle_completion(ctx(), Endpoint::kChat, req, body, res);
       });
  post("/v1/completions",
       [this](const httplib::Request& req, const std::string& body, httplib::Response& res) {
         handle_completion(ctx(), Endpoint::kCompletion, req, body, res);
       });
  // Anthropic's Messages API, translated onto the chat route's pipeline.
  post("/v1/messages", [this](const httplib::Request& req, const std::string& body,
                              httplib::Response& res) { handle_messages(ctx(), req, body, res); });
  post("/v1/messages/count_tokens",
       [this](const httplib::Request&, const std::string& body, httplib::Response& res) {
         handle_count_tokens(*ctx(), body, res);
       });
  // OpenAI's Responses API, translated onto the chat route's pipeline likewise.
  post("/v1/responses",
       [this](const httplib::Request& req, const std::string& body, httplib::Response& res) {
         handle_create_response(ctx(), req, body, res);
       });
  server.Get(R"(/v1/responses/([^/]+))",
             [this](const httplib::Request& req, httplib::Response& res) {
               handle_get_response(*ctx(), req.matches[1], res);
             });
  server.Delete(R"(/v1/responses/([^/]+))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  handle_delete_response(*ctx(), req.matches[1], res);
                });
  post("/v1/load_lora_adapter",
       [this](const httplib::Request&, const std::string& body, httplib::Response& res) {
         admin_reply(res, load_lora_route(*ctx(), body));
       });
  post("/v1/unload_lora_adapter",
       [this](const httplib::Request&, const std::string& body, httplib::Response& res) {
         admin_reply(res, unload_lora_route(*ctx(), body));
       });
  post("/tokenize", [this](const httplib::Request&, const std::string& body,
                           httplib::Response& res) { tokenize(body, res); });
  post("/detokenize", [this](const httplib::Request&, const std::string& body,
                             httplib::Response& res) { detokenize(body, res); });
}

// Auth and "not ready" answers, before any route runs (and before the body is read).
httplib::Server::HandlerResponse HttpServer::Impl::pre_route(const httplib::Request& req,
                                                             httplib::Response& res) {
  using R = httplib::Server::HandlerResponse;
  // CORS is off unless --allowed-origins lists the page's origin; a preflight needs no key.
  const std::string origin = req.get_header_value("Origin");
  const bool cors = origin_allowed(options.allowed_origins, origin);
  if (cors) {
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
  }
  if (req.method == "OPTIONS") {
    res.status = 204;
    res.set_header("Allow", "GET, POST, DELETE, OPTIONS");
    if (cors) {
      res.set_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
      res.set_header("Access-Control-Allow-Headers",
                     "Authorization, Content-Type, x-api-key, anthropic-version");
      res.set_header("Access-Control-Max-Age", "600");
    }
    return R::Handled;
  }
  const bool probe = req.path == "/health" || req.path == "/metrics";
  const bool keyed_route =
      req.path.rfind("/v1", 0) == 0 || (options.key_for_health_metrics && probe);
  if (!options.api_key.empty() && keyed_route) {
    // OpenAI clients send `Authorization: Bearer KEY`; Anthropic's send `x-api-key: KEY`.
    std::string auth = req.get_header_value("Authorization");
    std::string x_api_key = req.get_header_value("x-api-key");
    if (!same_secret(auth, "Bearer " + options.api_key) &&
        !(req.has_header("x-api-key") && same_secret(x_api_key, options.api_key))) {
      ApiError e;
      e.status = 401;
      e.code = "invalid_api_key";
      e.message = auth.empty() && x_api_key.empty()
                      ? "missing API key: send the header 'Authorization: Bearer KEY' (or "
                        "'x-api-key: KEY')"
                      : "incorrect API key provided";
      send_route_error(req, res, e);
      return R::Handled;
    }
  }
  if (needs_model(req.path)) {
    if (shutting_down.load()) {
      send_route_error(req, res, unavailable("the server is shutting down", "shutting_down"));
      return R::Handled;
    }
    if (!ctx()) {
      send_route_error(req, res,
                       unavailable("the model is still loading; retry shortly", "loading"));
      return R::Handled;
    }
  }
  return R::Unhandled;
}

HttpServer::HttpServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->started = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  impl_->setup();
}

HttpServer::~HttpServer() {
  stop();
}

int HttpServer::bind() {
  const auto& o = impl_->options;
  const rlim_t files = raise_open_file_limit();
  // Leave room for the model's files, the engine's and the logs' descriptors.
  if (files < static_cast<rlim_t>(o.max_connections) + 128) {
    const int fit = std::max(16, static_cast<int>(files) - 128);
    std::fprintf(stderr,
                 "pagedserve: the open-file limit is %llu; serving at most %d connections "
                 "(raise it with `ulimit -n` for more)\n",
                 static_cast<unsigned long long>(files), fit);
    impl_->server.set_max_connections(fit);
  }
  int port = o.port == 0 ? impl_->server.bind_to_any_port(o.host)
                         : (impl_->server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port <= 0) {
    throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                             " (address in use, or not an address of this machine)");
  }
  // listen() again on a listening socket only changes its backlog (Linux).
  if (int fd = impl_->listen_fd.load(); fd >= 0) ::listen(fd, SOMAXCONN);
  return port;
}

void HttpServer::set_context(std::shared_ptr<const ServingContext> context) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->context = std::move(context);
}

void HttpServer::run() {
  impl_->run_started.store(true);
  if (!impl_->stop_requested.load()) impl_->server.listen_after_bind();
  impl_->run_returned.store(true);
}

void HttpServer::begin_shutdown() {
  impl_->shutting_down.store(true);
  impl_->server.set_draining(true);
}

void HttpServer::wait_for_responses(std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (impl_->server.counts().active > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int HttpServer::max_connections() const {
  return impl_->server.max_connections();
}

void HttpServer::stop() {
  impl_->stop_requested.store(true);
  // httplib's stop() does nothing before listen has started, so a stop that races with run()
  // waits (briefly) until there is a running server to stop.
  for (int i = 0; i < 5000; ++i) {
    if (impl_->server.is_running()) {
      impl_->server.stop();
      return;
    }
    if (!impl_->run_started.load() || impl_->run_returned.load()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace ps
