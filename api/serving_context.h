#pragma once
// What request handlers need once the model is loaded. Shared and immutable: handler threads
// hold it while they run, so the engine outlives every request that uses it.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "api/openai_request.h"
#include "chat/chat_template.h"
#include "engine/engine.h"
#include "tokenizer/tokenizer.h"

namespace ps {

struct ServingContext {
  std::shared_ptr<Engine> engine;
  std::shared_ptr<const Tokenizer> tokenizer;
  ChatTemplate chat_template{ChatTemplateKind::kChatML};
  std::string served_model_name;
  RequestLimits limits;
  int32_t max_model_len = 0;
  int32_t block_size = 16;  // KV-cache block size in tokens (for routers' prefix-cache scorers)
  // --request-timeout: a completion still generating after this long is cancelled and answered
  // with a timeout error (zero: no limit).
  std::chrono::milliseconds request_timeout{0};
};

}  // namespace ps
