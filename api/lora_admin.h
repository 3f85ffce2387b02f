#pragma once
// The API side of serving several LoRA adapters (issue #22): a request's `model` picks the base
// or an adapter, /v1/models lists both (adapters with `parent`, as vLLM does), and, when the
// server was started with --enable-lora-runtime-updates, POST /v1/load_lora_adapter and
// /v1/unload_lora_adapter take vLLM's bodies ({"lora_name", "lora_path"}).
#include <memory>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "api/serving_context.h"
#include "openai/api_error.h"

namespace ps {

class LoraLease;

// The lease for `model` (null for the base model, or an empty name); 404 model_not_found, as for
// an unknown model, when neither the base nor a loaded adapter has that name.
std::variant<std::shared_ptr<const LoraLease>, ApiError> resolve_model(const ServingContext& ctx,
                                                                       const std::string& model);

// The "data" array of /v1/models: the base first, then each loaded adapter.
nlohmann::json model_cards(const ServingContext& ctx, int64_t started);

// The 200 body, or the error to answer. Runtime updates off: 404 naming the flag.
std::variant<nlohmann::json, ApiError> load_lora_route(const ServingContext& ctx,
                                                       const std::string& body);
std::variant<nlohmann::json, ApiError> unload_lora_route(const ServingContext& ctx,
                                                         const std::string& body);

}  // namespace ps
