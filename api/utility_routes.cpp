// HttpServer's small routes (http_server_impl.h): /health, /v1/models, /tokenize, /detokenize
// and /metrics. Split from http_server.cpp, which sets up the server, gates every request and
// routes completions and LoRA admin.
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "api/http_reply.h"
#include "api/http_server_impl.h"
#include "api/lora_admin.h"
#include "metrics/metrics_text.h"
#include "metrics/router_metrics.h"
#include "openai/chat_messages.h"
#include "openai/openai_request.h"

namespace ps {

void HttpServer::Impl::health(httplib::Response& res) {
  if (shutting_down.load()) return send_json(res, 503, {{"status", "shutting_down"}});
  if (!ctx()) return send_json(res, 503, {{"status", "loading"}});
  send_json(res, 200, {{"status", "ok"}});
}

void HttpServer::Impl::models(httplib::Response& res) {
  send_json(res, 200, {{"object", "list"}, {"data", model_cards(*ctx(), started)}});
}

void HttpServer::Impl::tokenize(const std::string& body, httplib::Response& res) {
  auto c = ctx();
  auto parsed = parse_tokenize_request(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
  auto& r = std::get<TokenizeRequest>(parsed);
  std::string text = r.prompt;
  if (r.is_chat) {
    auto rendered = render_prompt(*c->chat_renderer, r.chat);
    if (auto* e = std::get_if<ApiError>(&rendered)) return send_error(res, *e);
    text = std::move(std::get<std::string>(rendered));
  }
  std::vector<int32_t> ids = c->tokenizer->encode(text);
  send_json(res, 200,
            {{"tokens", ids}, {"count", ids.size()}, {"max_model_len", c->max_model_len}});
}

void HttpServer::Impl::detokenize(const std::string& body, httplib::Response& res) {
  auto c = ctx();
  auto parsed = parse_detokenize_request(body, c->limits.vocab_size);
  if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
  send_json(res, 200,
            {{"prompt", c->tokenizer->decode(std::get<DetokenizeRequest>(parsed).tokens)}});
}

void HttpServer::Impl::metrics(httplib::Response& res) {
  auto c = ctx();
  EngineStats stats = c ? c->engine->stats() : EngineStats{};
  res.status = 200;
  RouterMetricsInfo info;
  if (c) {
    info.model_name = c->served_model_name;
    info.block_size = c->block_size;
  }
  info.edge = server.counts();
  res.set_content(metrics_text(stats, counters.snapshot()) + router_metrics_text(stats, info),
                  "text/plain; version=0.0.4; charset=utf-8");
}

void HttpServer::Impl::kv_cache_blocks(httplib::Response& res) {
  auto c = ctx();
  if (!c || !c->kv_events_enabled) {
    ApiError e;
    e.status = 404;
    e.message = "GET /debug/kv-cache/blocks needs --kv-events-config with enable_kv_cache_events";
    return send_error(res, e);
  }
  auto snap = c->engine->cache_snapshot(std::chrono::seconds(30));
  if (!snap) {
    ApiError e;
    e.status = 503;
    e.type = "server_error";
    e.message = "the engine did not answer";
    e.retry_after_s = 1;
    return send_error(res, e);
  }
  send_json(res, 200,
            {{"block_hashes", snap->block_hashes},
             {"num_blocks", snap->block_hashes.size()},
             {"last_event_seq", snap->last_event_seq}});
}

}  // namespace ps
