// `pagedserve serve`: the OpenAI-compatible HTTP server over one engine. This file only reads
// flags and wires the pieces together; the server lives in api/, the engine in engine/.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "api/http_server.h"
#include "app/chat_template_flag.h"
#include "app/commands.h"
#include "app/engine_flags.h"
#include "app/flags.h"
#include "app/lora_flags.h"
#include "checkpoint/loader.h"
#include "convert/lora_loader.h"
#include "engine/engine.h"
#include "http/shutdown_signal.h"
#include "kvevents/kv_event_publisher.h"
#include "kvevents/kv_events_config.h"
#include "openai/constraint_builder.h"
#include "responses/response_store.h"
#include "tokenizer/tokenizer.h"

namespace ps {
namespace {

const char* kServeUsage =
    "usage: pagedserve serve --model DIR|ORG/NAME [--revision main] [--host 127.0.0.1]\n"
    "  [--port 8000] (ORG/NAME: a model in the local Hugging Face cache, never downloaded)\n"
    "  [--api-key KEY (or env PAGEDSERVE_API_KEY)] [--served-model-name NAME]\n"
    "  [--generation-config auto|none|DIR (auto: the model's generation_config.json fills the\n"
    "  sampling fields a request leaves out)]\n"
    "  [--chat-template chatml|llama3|plain|FILE (default: the checkpoint's own)]\n"
    "  [--reasoning-parser auto|qwen3|deepseek_r1|harmony|none]\n"
    "  [--tool-call-parser auto|hermes|llama3_json|mistral|harmony|none]\n"
    "  [--max-body-bytes 1048576] [--max-n 16]\n"
    "  [--http-threads 512 (requests served at once; idle connections hold no thread)]\n"
    "  [--header-timeout 5 (seconds for a request's headers to arrive)]\n"
    "  [--body-timeout 30 (seconds for its body to arrive after the headers)]\n"
    "  [--keep-alive-timeout 75 (idle seconds; keep it above a proxy's, nginx: 60)]\n"
    "  [--max-connections 8192] [--max-connections-per-client 0 (0: no cap)]\n"
    "  [--shutdown-timeout 10 (seconds to finish requests on SIGTERM)]\n"
    "  [--max-tokens-limit N (largest max_tokens a request may ask; 0: the context)]\n"
    "  [--request-timeout SECONDS (0: none; a longer completion ends with a 408 error)]\n"
    "  [--max-queue-seconds S (0: none; a request not started by then is refused with 503)]\n"
    "  [--max-request-seconds S (0: none; a request still generating then ends, finish_reason\n"
    "  length)] (a request's max_queue_seconds / max_request_seconds may ask for less)\n"
    "  [--responses-store-size 1024 (responses kept for previous_response_id when a request\n"
    "  sends store: true; 0: none)] [--responses-store-ttl 3600 (seconds one is kept)]\n"
    "  [--allowed-origins URL,URL|* (CORS; off by default)] [--metrics-require-key\n"
    "  (with --api-key, /health and /metrics need the key too)] [--debug-check-integrity\n"
    "  (check the KV cache after every engine step; slow, for tests)]\n"
    "  [--kv-events-config JSON (vLLM's KV-cache events over ZMQ, e.g.\n"
    "  '{\"enable_kv_cache_events\": true, \"publisher\": \"zmq\", \"endpoint\":\n"
    "  \"tcp://*:5557\", \"replay_endpoint\": \"tcp://*:5558\", \"topic\": \"kv-events\"}';\n"
    "  GET /debug/kv-cache/blocks then lists the cached block hashes)]\n"
    "  engine: [--max-num-seqs 64] [--max-batched-tokens 2048] [--max-model-len N]\n"
    "          [--max-queued-requests 4096] [--block-size 16] [--num-blocks N |\n"
    "          --kv-cache-memory 512M] [--no-prefix-caching]\n"
    "          [--disable-hybrid-kv-cache-manager]\n"
    "          [--state-snapshot-interval 256 (linear-attention models: keep the recurrent\n"
    "          state every N prompt tokens for prefix hits; 0: never)]\n"
    "          [--max-state-snapshots N (default: a quarter of --kv-cache-memory, <= 64)]\n"
    "          [--scheduling-policy fcfs|priority (priority: a request's \"priority\", lower\n"
    "          first, may preempt higher values)]\n"
    "  LoRA: [--lora-modules NAME=PATH [NAME=PATH ...] (PEFT directories or .pth adapters; a\n"
    "        request's \"model\": NAME picks one)] [--max-loras N (adapters resident at once)]\n"
    "        [--max-lora-rank 64] [--enable-lora-runtime-updates (POST /v1/load_lora_adapter\n"
    "        and /v1/unload_lora_adapter)]\n";

int64_t int_in(const Flags& flags, const std::string& name, int64_t fallback, int64_t lo,
               int64_t hi) {
  int64_t v = flags.i64(name, fallback);
  if (v < lo || v > hi) {
    throw UsageError("flag --" + name + " must be between " + std::to_string(lo) + " and " +
                     std::to_string(hi) + ", got " + std::to_string(v));
  }
  return v;
}

// "--allowed-origins https://a.example,http://localhost:3000": exact origins, or "*".
std::vector<std::string> split_origins(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.back() == ' ') item.pop_back();
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    if (item.empty()) continue;
    if (item != "*" && item.find("://") == std::string::npos) {
      throw UsageError("--allowed-origins: '" + item +
                       "' is not an origin; write scheme://host[:port] or *");
    }
    if (item.back() == '/') item.pop_back();  // browsers send origins without a trailing slash
    out.push_back(item);
  }
  return out;
}

std::string default_model_name(const std::string& dir) {
  std::filesystem::path p(dir);
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();  // "models/tiny/"
  return name.empty() ? "model" : name;
}

}  // namespace

int serve_command(int argc, char** argv) {
  std::set<std::string> valued = {"model",
                                  "host",
                                  "port",
                                  "api-key",
                                  "chat-template",
                                  "reasoning-parser",
                                  "tool-call-parser",
                                  "served-model-name",
                                  "max-body-bytes",
                                  "max-n",
                                  "http-threads",
                                  "header-timeout",
                                  "body-timeout",
                                  "keep-alive-timeout",
                                  "max-connections",
                                  "max-connections-per-client",
                                  "shutdown-timeout",
                                  "max-tokens-limit",
                                  "request-timeout",
                                  "max-queue-seconds",
                                  "max-request-seconds",
                                  "allowed-origins",
                                  "responses-store-size",
                                  "responses-store-ttl",
                                  "generation-config",
                                  "kv-events-config"};
  std::set<std::string> switches = {"help", "metrics-require-key", "debug-check-integrity",
                                    "enable-lora-runtime-updates"};
  valued.insert({"max-loras", "max-lora-rank"});
  const std::vector<LoraModuleFlag> lora_modules = take_lora_modules(argc, argv, 2);
  Flags flags = engine_command_flags(argc, argv, 2, valued, switches);
  if (flags.on("help")) {
    std::fputs(kServeUsage, stdout);
    return 0;
  }
  if (!flags.positional().empty()) {
    throw UsageError("unexpected argument '" + flags.positional()[0] + "'");
  }

  // Every flag is checked before the port is taken or the model is read.
  ServerOptions options;
  options.host = flags.str("host", options.host);
  options.port = static_cast<int>(int_in(flags, "port", 8000, 0, 65535));
  const char* env_key = std::getenv("PAGEDSERVE_API_KEY");
  options.api_key = flags.str("api-key", env_key ? env_key : "");
  options.max_body_bytes =
      static_cast<size_t>(int_in(flags, "max-body-bytes", 1 << 20, 1024, int64_t{1} << 32));
  options.http_threads = static_cast<int>(int_in(flags, "http-threads", 512, 4, 8192));
  options.header_timeout_s = static_cast<int>(int_in(flags, "header-timeout", 5, 1, 3600));
  options.body_timeout_s = static_cast<int>(int_in(flags, "body-timeout", 30, 1, 3600));
  options.keep_alive_timeout_s =
      static_cast<int>(int_in(flags, "keep-alive-timeout", 75, 1, 86400));
  options.max_connections = static_cast<int>(int_in(flags, "max-connections", 8192, 16, 1 << 20));
  options.max_connections_per_client =
      static_cast<int>(int_in(flags, "max-connections-per-client", 0, 0, 1 << 20));
  const auto max_n = static_cast<int32_t>(int_in(flags, "max-n", 16, 1, 256));
  const auto drain = std::chrono::seconds(int_in(flags, "shutdown-timeout", 10, 0, 3600));
  const auto max_tokens_limit =
      static_cast<int32_t>(int_in(flags, "max-tokens-limit", 0, 0, int64_t{1} << 30));
  const double timeout_s = flags.f64("request-timeout", 0);
  if (!(timeout_s >= 0 && timeout_s <= 86400)) {
    throw UsageError("flag --request-timeout must be between 0 and 86400 seconds");
  }
  const auto request_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  const auto deadline_flag = [&flags](const char* name) {
    const double s = flags.f64(name, 0);
    if (!(s >= 0 && s <= 1e7)) {
      throw UsageError(std::string("flag --") + name + " must be between 0 and 1e7 seconds");
    }
    return s;
  };
  const double max_queue_seconds = deadline_flag("max-queue-seconds");
  const double max_request_seconds = deadline_flag("max-request-seconds");
  const auto store_size =
      static_cast<size_t>(int_in(flags, "responses-store-size", 1024, 0, 1 << 20));
  const auto store_ttl =
      std::chrono::seconds(int_in(flags, "responses-store-ttl", 3600, 1, 604800));
  options.key_for_health_metrics = flags.on("metrics-require-key");
  if (options.key_for_health_metrics && options.api_key.empty()) {
    throw UsageError("--metrics-require-key needs --api-key (or env PAGEDSERVE_API_KEY)");
  }
  options.allowed_origins = split_origins(flags.str("allowed-origins", ""));
  const ModelLocation location = model_location_from_flags(flags);
  const std::string& dir = location.dir;
  EngineConfig engine_config = engine_config_from_flags(flags);
  engine_config.check_integrity_every_step = flags.on("debug-check-integrity");
  std::optional<KvEventsConfig> kv_events;
  if (auto text = flags.opt("kv-events-config")) {
    try {
      kv_events = parse_kv_events_config(*text);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("flag --kv-events-config: ") + e.what());
    }
  }
  engine_config.max_loras = max_loras_for(flags, lora_modules.size());
  const int32_t max_lora_rank = max_lora_rank_from_flags(flags);
  auto renderer =
      std::make_shared<const chat::ChatRenderer>(chat_renderer_from_flags(flags, dir, "serve"));
  const std::optional<chat::ReasoningStyle> reasoning = reasoning_from_flags(flags, *renderer);
  const std::optional<chat::ToolCallFormat> tool_parser = tool_parser_from_flags(flags, *renderer);
  const std::string generation_config = flags.str("generation-config", "auto");
  if (generation_config != "auto" && generation_config != "none" &&
      !std::filesystem::is_directory(generation_config)) {
    throw UsageError(
        "--generation-config must be auto, none or a directory holding "
        "generation_config.json, got '" +
        generation_config + "'");
  }
  // A Hub id is served under the name the user typed, as vLLM does ("Qwen/Qwen3-0.6B").
  const std::string model_name =
      flags.str("served-model-name", location.from_hub ? location.typed : default_model_name(dir));

  ShutdownSignal signals;  // before any thread starts, so all of them inherit the mask
  // ZMQ's threads start here, after the mask; bound before anything listens, so an endpoint
  // ZMQ refuses is a start-up error.
  if (kv_events && kv_events->enabled && kv_events->publisher == "zmq") {
    try {
      engine_config.kv_events = std::make_shared<KvEventPublisher>(*kv_events);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("flag --kv-events-config: ") + e.what());
    }
    std::printf("kv events: publishing on %s%s%s, topic '%s'\n", kv_events->endpoint.c_str(),
                kv_events->replay_endpoint ? ", replay on " : "",
                kv_events->replay_endpoint ? kv_events->replay_endpoint->c_str() : "",
                kv_events->topic.c_str());
  }
  HttpServer server(options);
  const int port = server.bind();
  // Listening before loading: /health answers 503 until the model is ready.
  std::printf("listening on http://%s:%d\n", options.host.c_str(), port);
  std::fflush(stdout);
  std::thread http([&server] { server.run(); });

  std::mutex mu;
  std::shared_ptr<Engine> engine;
  bool stopping = false;
  signals.start([&](int) {
    server.begin_shutdown();
    std::shared_ptr<Engine> e;
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = true;
      e = engine;
    }
    // Running requests get `drain` to finish; the rest end with an abort event, which their
    // handlers turn into a clean error before the server closes.
    if (e) {
      const int64_t cut = e->shutdown(std::chrono::duration_cast<std::chrono::milliseconds>(drain));
      // Said, so that a stream that ended with an abort event on a slow host is explained in
      // the server's log rather than left to look like a bug.
      if (cut > 0) {
        std::fprintf(stderr,
                     "pagedserve: the %llds drain window (--shutdown-timeout) ended with %lld "
                     "request(s) unfinished; they end with an abort event\n",
                     static_cast<long long>(drain.count()), static_cast<long long>(cut));
      }
    }
    server.wait_for_responses(std::chrono::seconds(5));
    server.stop();
  });

  auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "pagedserve serve: %s\n", what.c_str());
    server.stop();
    http.join();
    signals.stop();
    return 1;
  };
  std::shared_ptr<ServingContext> ctx;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    auto tokenizer =
        std::make_shared<const Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
    LoadedModel model = load_model_with_lora(flags, dir);
    auto e = std::make_shared<Engine>(std::move(model), tokenizer, engine_config);
    load_lora_modules(*e, lora_modules, max_lora_rank, model_name);
    ctx = std::make_shared<ServingContext>();
    ctx->engine = e;
    ctx->tokenizer = tokenizer;
    ctx->chat_renderer = renderer;
    ctx->reasoning = reasoning;
    ctx->tool_parser = tool_parser;
    ctx->grammar_compiler = make_grammar_compiler(*tokenizer, e->model_config().eos_token_ids);
    ctx->served_model_name = model_name;
    ctx->max_model_len = e->max_model_len();
    ctx->block_size = engine_config.block_size;
    ctx->kv_events_enabled = engine_config.kv_events != nullptr;
    ctx->limits.max_n = max_n;
    ctx->limits.max_tokens_limit = max_tokens_limit;
    ctx->limits.max_queue_seconds = max_queue_seconds;
    ctx->limits.max_request_seconds = max_request_seconds;
    if (generation_config != "none") {
      const std::string from = generation_config == "auto" ? dir : generation_config;
      ctx->limits.generation_defaults =
          GenerationDefaults::from_file(from + "/generation_config.json");
    }
    ctx->request_timeout = request_timeout;
    ctx->response_store = std::make_shared<responses::ResponseStore>(store_size, store_ttl);
    if (flags.on("enable-lora-runtime-updates")) {
      ctx->read_lora = [base = e->model_config(), max_lora_rank](const std::string& path) {
        return load_lora_adapter(base, path, max_lora_rank);
      };
    }
    // Ids past either table would index beyond the embedding or the tokenizer's byte table.
    ctx->limits.vocab_size = std::min(e->model_config().vocab_size, tokenizer->vocab_size());
    std::lock_guard<std::mutex> lock(mu);
    if (!stopping) {
      engine = e;
      server.set_context(ctx);
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const GenerationDefaults& d = ctx->limits.generation_defaults;
      std::printf("generation defaults: %s\n",
                  generation_config == "none" ? "none (--generation-config none)"
                  : d.empty()                 ? "none (no generation_config.json settings)"
                              : (d.describe() + " (from " + d.source + ")").c_str());
      std::printf(
          "ready: model '%s' from %s (chat template %s, reasoning parser %s, tool-call parser %s, "
          "context %d tokens) in %.1f s\n",
          model_name.c_str(), dir.c_str(), renderer->describe().c_str(),
          reasoning ? chat::reasoning_style_name(*reasoning) : "none",
          tool_parser ? chat::tool_call_format_name(*tool_parser) : "none", ctx->max_model_len,
          secs);
      std::printf("kernels: %s\n", e->kernel_summary().c_str());
      if (engine_config.max_loras > 0) {
        std::printf(
            "LoRA: %zu adapters loaded (--max-loras %d, --max-lora-rank %d, runtime "
            "updates %s)\n",
            lora_modules.size(), engine_config.max_loras, max_lora_rank,
            ctx->read_lora ? "on" : "off");
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    return fail(std::string("cannot load the model: ") + e.what());
  }

  http.join();     // returns after server.stop(), once in-flight connections are done
  signals.stop();  // the shutdown callback has returned: nothing uses the engine any more
  ctx.reset();
  {
    std::lock_guard<std::mutex> lock(mu);
    engine.reset();  // joins the engine thread
  }
  if (!signals.received()) {
    std::fprintf(stderr, "pagedserve serve: the HTTP server stopped unexpectedly\n");
    return 1;
  }
  std::printf("pagedserve: stopped\n");
  return 0;
}

}  // namespace ps
