#pragma once
// What request handlers need once the model is loaded. Shared and immutable: handler threads
// hold it while they run, so the engine outlives every request that uses it.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "chat/chat_renderer.h"
#include "chat/reasoning_parser.h"
#include "chat/tool_call_parser.h"
#include "engine/engine.h"
#include "openai/openai_request.h"
#include "responses/response_store.h"
#include "structured/grammar_compiler.h"
#include "tokenizer/tokenizer.h"

namespace ps {

struct LoraAdapter;  // held by pointer only (engine/lora_registry.h)

struct ServingContext {
  std::shared_ptr<Engine> engine;
  std::shared_ptr<const Tokenizer> tokenizer;
  // Renders chat requests (and /tokenize with messages); never null once serving.
  std::shared_ptr<const chat::ChatRenderer> chat_renderer;
  // --reasoning-parser: splits chat replies into reasoning_content and content; nullopt: off.
  std::optional<chat::ReasoningStyle> reasoning;
  // --tool-call-parser (or the one the template's source makes clear): turns replies to
  // requests with tools into tool_calls; nullopt: such requests are refused.
  std::optional<chat::ToolCallFormat> tool_parser;
  // Compiles response_format / structured_outputs / tool grammars on handler threads (cached by
  // content, bounded in time and size); never null once serving.
  std::shared_ptr<GrammarCompiler> grammar_compiler;
  std::string served_model_name;
  RequestLimits limits;
  int32_t max_model_len = 0;
  int32_t block_size = 16;  // KV-cache block size in tokens (for routers' prefix-cache scorers)
  // --kv-events-config publishes the cache's events: GET /debug/kv-cache/blocks shows the keys
  // they describe (only then: the events already give subscribers the same tokens' hashes).
  bool kv_events_enabled = false;
  // --request-timeout: a completion still generating after this long is cancelled and answered
  // with a timeout error (zero: no limit).
  std::chrono::milliseconds request_timeout{0};
  // --enable-lora-runtime-updates: reads and checks an adapter for this base (a LoRA path ->
  // adapter; throws std::runtime_error naming the file and tensor). Empty: runtime LoRA loading
  // and unloading are off (api/lora_admin.h).
  std::function<std::shared_ptr<const LoraAdapter>(const std::string& path)> read_lora;
  // --responses-store-size / --responses-store-ttl: responses kept for previous_response_id and
  // GET /v1/responses/{id} (the store locks itself; the pointer never changes once serving).
  std::shared_ptr<responses::ResponseStore> response_store;
};

}  // namespace ps
