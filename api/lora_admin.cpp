#include "api/lora_admin.h"

#include <stdexcept>

#include "engine/lora_registry.h"

namespace ps {
namespace {

using nlohmann::json;

ApiError not_found(std::string param, std::string message) {
  ApiError e = invalid_param(std::move(param), std::move(message));
  e.status = 404;
  e.code = "model_not_found";
  return e;
}

// The lora_name (and, when wanted, lora_path) of a vLLM-style admin body.
std::variant<json, ApiError> parse_admin_body(const std::string& body, bool want_path) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return invalid_param("", "the body must be a JSON object, e.g. {\"lora_name\": \"NAME\"" +
                                 std::string(want_path ? ", \"lora_path\": \"DIR\"}" : "}"));
  }
  for (const char* key : {"lora_name", "lora_path"}) {
    if (!want_path && std::string(key) == "lora_path") continue;
    if (!j.contains(key) || !j.at(key).is_string() || j.at(key).get<std::string>().empty()) {
      return invalid_param(key, std::string("'") + key + "' must be a non-empty string");
    }
  }
  return j;
}

std::optional<ApiError> runtime_updates_off(const ServingContext& ctx) {
  if (ctx.read_lora) return std::nullopt;
  ApiError e;
  e.status = 404;
  e.code = "not_found";
  e.message =
      "loading and unloading LoRA adapters at run time is off; start the server with "
      "--enable-lora-runtime-updates (and --max-loras N)";
  return e;
}

}  // namespace

std::variant<std::shared_ptr<const LoraLease>, ApiError> resolve_model(const ServingContext& ctx,
                                                                       const std::string& model) {
  if (model.empty() || model == ctx.served_model_name) return std::shared_ptr<const LoraLease>();
  if (auto lease = ctx.engine->loras()->acquire(model)) return lease;
  std::string served = "'" + ctx.served_model_name + "'";
  for (const LoraEntryInfo& a : ctx.engine->loras()->list()) served += ", '" + a.name + "'";
  return not_found("model",
                   "The model '" + model + "' does not exist; this server serves " + served);
}

json model_cards(const ServingContext& ctx, int64_t started) {
  json data = json::array();
  data.push_back({{"id", ctx.served_model_name},
                  {"object", "model"},
                  {"created", started},
                  {"owned_by", "pagedserve"},
                  {"parent", nullptr},
                  {"max_model_len", ctx.max_model_len}});
  for (const LoraEntryInfo& a : ctx.engine->loras()->list()) {
    data.push_back({{"id", a.name},
                    {"object", "model"},
                    {"created", a.created},
                    {"owned_by", "pagedserve"},
                    {"root", a.source},
                    {"parent", ctx.served_model_name},
                    {"lora_rank", a.rank},
                    {"max_model_len", ctx.max_model_len}});
  }
  return data;
}

std::variant<json, ApiError> load_lora_route(const ServingContext& ctx, const std::string& body) {
  if (auto off = runtime_updates_off(ctx)) return *off;
  auto parsed = parse_admin_body(body, /*want_path=*/true);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const json& j = std::get<json>(parsed);
  const std::string name = j.at("lora_name").get<std::string>();
  const std::string path = j.at("lora_path").get<std::string>();
  if (name == ctx.served_model_name) {
    return invalid_param("lora_name", "'" + name + "' is the base model's name");
  }
  std::shared_ptr<const LoraAdapter> adapter;
  try {
    adapter = ctx.read_lora(path);
  } catch (const std::exception& e) {
    return invalid_param("lora_path", std::string("cannot load LoRA adapter: ") + e.what());
  }
  if (auto error = ctx.engine->loras()->add(name, std::move(adapter))) {
    return invalid_param("lora_name", *error);
  }
  json reply = {{"object", "lora_adapter"},
                {"lora_name", name},
                {"lora_path", path},
                {"message", "Success: LoRA adapter '" + name + "' added successfully."}};
  for (const LoraEntryInfo& a : ctx.engine->loras()->list()) {
    if (a.name == name) reply["rank"] = a.rank;
  }
  return reply;
}

std::variant<json, ApiError> unload_lora_route(const ServingContext& ctx, const std::string& body) {
  if (auto off = runtime_updates_off(ctx)) return *off;
  auto parsed = parse_admin_body(body, /*want_path=*/false);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const std::string name = std::get<json>(parsed).at("lora_name").get<std::string>();
  const std::optional<int32_t> in_flight = ctx.engine->loras()->remove(name);
  if (!in_flight) {
    return not_found("lora_name", "no LoRA adapter named '" + name + "' is loaded");
  }
  // New requests for it get 404 from now on; those already running finish with it.
  return json{{"object", "lora_adapter"},
              {"lora_name", name},
              {"requests_in_flight", *in_flight},
              {"message", "Success: LoRA adapter '" + name + "' removed successfully." +
                              (*in_flight > 0 ? " Its " + std::to_string(*in_flight) +
                                                    " running requests finish with it first."
                                              : "")}};
}

}  // namespace ps
