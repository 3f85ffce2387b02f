#include "openai/openai_request.h"

#include <algorithm>
#include <limits>

#include "openai/chat_messages.h"
#include "openai/json_fields.h"

namespace ps {
namespace {

using nlohmann::json;
using namespace json_fields;  // NOLINT: this file is made of these helpers

std::vector<PromptInput> parse_prompts(const json& body, const RequestLimits& limits) {
  const json* p = find(body, "prompt");
  if (!p) reject("prompt", "'prompt' is required");
  std::vector<PromptInput> out;
  auto ids_of = [&](const json& arr, const std::string& name) {
    PromptInput in;
    in.is_ids = true;
    for (const json& t : arr) in.ids.push_back(token_id(t, name, limits.vocab_size));
    if (in.ids.empty()) reject(name, "'" + name + "' must not be empty");
    return in;
  };
  if (p->is_string()) {
    out.push_back({false, p->get<std::string>(), {}});
  } else if (p->is_array() && !p->empty()) {
    const json& first = (*p)[0];
    for (size_t i = 0; i < p->size(); ++i) {
      const json& e = (*p)[i];
      std::string name = "prompt[" + std::to_string(i) + "]";
      if (first.is_string() && e.is_string()) {
        out.push_back({false, e.get<std::string>(), {}});
      } else if (first.is_number() && e.is_number()) {
        if (i == 0) out.push_back(ids_of(*p, "prompt"));
      } else if (first.is_array() && e.is_array()) {
        out.push_back(ids_of(e, name));
      } else {
        reject("prompt",
               "'prompt' must be a string, an array of strings, an array of token ids, or an "
               "array of token id arrays");
      }
    }
  } else if (p->is_array()) {
    reject("prompt", "'prompt' must not be empty");
  } else {
    wrong_type("prompt", "a string or an array", *p);
  }
  for (const auto& in : out) {
    if (!in.is_ids && in.text.empty()) reject("prompt", "'prompt' must not be empty");
  }
  if (out.size() > 64)
    reject("prompt", "at most 64 prompts per request, got " + std::to_string(out.size()));
  return out;
}

void parse_stop(const json& body, const RequestLimits& limits, SamplingParams* p) {
  const json* stop = find(body, "stop");
  if (stop) {
    std::vector<std::string> list;
    if (stop->is_string()) {
      list.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const json& s : *stop) {
        if (!s.is_string()) wrong_type("stop", "a string or an array of strings", s);
        list.push_back(s.get<std::string>());
      }
    } else {
      wrong_type("stop", "a string or an array of strings", *stop);
    }
    if (static_cast<int32_t>(list.size()) > limits.max_stop) {
      reject("stop", "at most " + std::to_string(limits.max_stop) + " stop strings, got " +
                         std::to_string(list.size()));
    }
    for (const auto& s : list) {
      if (s.empty()) reject("stop", "stop strings must not be empty");
    }
    p->stop = std::move(list);
  }
  if (const json* ids = find(body, "stop_token_ids")) {
    if (!ids->is_array()) wrong_type("stop_token_ids", "an array of token ids", *ids);
    for (const json& t : *ids) {
      p->stop_token_ids.push_back(token_id(t, "stop_token_ids", limits.vocab_size));
    }
  }
}

void parse_logit_bias(const json& body, const RequestLimits& limits, SamplingParams* p) {
  const json* bias = find(body, "logit_bias");
  if (!bias) return;
  if (!bias->is_object()) wrong_type("logit_bias", "an object of token id -> bias", *bias);
  for (auto it = bias->begin(); it != bias->end(); ++it) {
    const std::string& key = it.key();
    char* end = nullptr;
    long long id = key.empty() ? -1 : std::strtoll(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || id < 0 || id >= limits.vocab_size) {
      reject("logit_bias", "logit_bias key '" + key + "' is not a token id in [0, " +
                               std::to_string(limits.vocab_size) + ")");
    }
    if (!it.value().is_number()) wrong_type("logit_bias", "an object of numbers", it.value());
    double v = it.value().get<double>();
    check_range("logit_bias", v, -100, 100);
    p->logit_bias[static_cast<int32_t>(id)] = static_cast<float>(v);
  }
}

// Fields OpenAI defines that we cannot honour: rejecting them beats silently ignoring them.
void reject_unsupported(const json& body, Endpoint endpoint, int32_t n) {
  if (endpoint == Endpoint::kCompletion) {
    for (const char* name : {"tools", "tool_choice", "functions"}) {
      if (find(body, name)) {
        reject(name, std::string("'") + name +
                         "' is for /v1/chat/completions; completions take "
                         "structured_outputs");
      }
    }
    if (auto suffix = get_string(body, "suffix"); suffix && !suffix->empty()) {
      reject("suffix", "'suffix' is not supported");
    }
    if (auto best_of = get_int(body, "best_of"); best_of && *best_of != n) {
      reject("best_of", "'best_of' other than n is not supported");
    }
  }
}

// A deadline in seconds: the body's (a positive number), capped by the server's; the server's
// when the body sends none.
std::optional<double> deadline_seconds(const json& body, const char* name, double server) {
  std::optional<double> v = get_number(body, name);
  if (v && !(*v > 0 && *v <= 1e7)) {
    reject(name, std::string("'") + name +
                     "' must be a number of seconds above 0 (at most 1e7), got " +
                     find(body, name)->dump());
  }
  if (!v) return server > 0 ? std::optional<double>(server) : std::nullopt;
  return server > 0 ? std::min(*v, server) : *v;
}

void parse_scheduling(const json& body, const RequestLimits& limits, SchedulingRequest* s) {
  if (auto v = get_int(body, "priority")) {
    if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
      reject("priority", "'priority' must fit a 32-bit integer, got " + std::to_string(*v));
    }
    s->priority = static_cast<int32_t>(*v);
  }
  s->queue_seconds = deadline_seconds(body, "max_queue_seconds", limits.max_queue_seconds);
  s->total_seconds = deadline_seconds(body, "max_request_seconds", limits.max_request_seconds);
}

void parse_sampling(const json& body, Endpoint endpoint, const RequestLimits& limits,
                    OpenAiRequest* r) {
  SamplingParams& p = r->params;
  // The checkpoint's defaults first; whatever the body sends replaces them below.
  const GenerationDefaults& defaults = limits.generation_defaults;
  if (defaults.temperature) p.temperature = *defaults.temperature;
  if (defaults.top_p) p.top_p = *defaults.top_p;
  if (defaults.top_k) p.top_k = std::min(*defaults.top_k, limits.vocab_size);
  if (defaults.min_p) p.min_p = *defaults.min_p;
  if (defaults.repetition_penalty) p.repetition_penalty = *defaults.repetition_penalty;
  if (auto v = get_number(body, "temperature")) {
    check_range("temperature", *v, 0, 2);
    p.temperature = static_cast<float>(*v);
  }
  if (auto v = get_number(body, "top_p")) {
    // Checked as the float it becomes: 1e-300 > 0 as a double but is 0 as a float.
    check_range("top_p", static_cast<float>(*v), 0, 1, /*lo_open=*/true);
    p.top_p = static_cast<float>(*v);
  }
  if (auto v = get_int(body, "top_k")) {
    if (*v < -1 || *v > limits.vocab_size) {
      reject("top_k", "'top_k' must be -1 (off), 0 (off) or at most the vocabulary size " +
                          std::to_string(limits.vocab_size) + ", got " + std::to_string(*v));
    }
    p.top_k = static_cast<int32_t>(*v);
  }
  if (auto v = get_number(body, "min_p")) {
    check_range("min_p", *v, 0, 1);
    p.min_p = static_cast<float>(*v);
  }
  if (auto v = get_number(body, "presence_penalty")) {
    check_range("presence_penalty", *v, -2, 2);
    p.presence_penalty = static_cast<float>(*v);
  }
  if (auto v = get_number(body, "frequency_penalty")) {
    check_range("frequency_penalty", *v, -2, 2);
    p.frequency_penalty = static_cast<float>(*v);
  }
  if (auto v = get_number(body, "repetition_penalty")) {
    check_range("repetition_penalty", static_cast<float>(*v), 0, 2, /*lo_open=*/true);
    p.repetition_penalty = static_cast<float>(*v);
  }
  if (auto v = get_int(body, "seed")) p.seed = static_cast<uint64_t>(*v);
  if (auto v = get_int(body, "n")) {
    if (*v < 1 || *v > limits.max_n) {
      reject("n", "'n' must be between 1 and " + std::to_string(limits.max_n) + ", got " +
                      std::to_string(*v));
    }
    p.n = static_cast<int32_t>(*v);
  }

  // max_completion_tokens is the newer name; it wins when both are sent.
  std::optional<int64_t> max_tokens = get_int(body, "max_tokens");
  std::string max_name = "max_tokens";
  if (auto v = get_int(body, "max_completion_tokens")) {
    max_tokens = v;
    max_name = "max_completion_tokens";
  }
  if (max_tokens) {
    // Completions take 0: the prompt is scored (echo, prompt_logprobs) and nothing generated.
    const int64_t least = endpoint == Endpoint::kCompletion ? 0 : 1;
    if (*max_tokens < least || *max_tokens > std::numeric_limits<int32_t>::max()) {
      reject(max_name, "'" + max_name + "' must be at least " + std::to_string(least) + ", got " +
                           std::to_string(*max_tokens));
    }
    if (limits.max_tokens_limit > 0 && *max_tokens > limits.max_tokens_limit) {
      reject(max_name,
             "'" + max_name + "' must be at most " + std::to_string(limits.max_tokens_limit) +
                 " on this server (--max-tokens-limit), got " + std::to_string(*max_tokens));
    }
    p.max_tokens = static_cast<int32_t>(*max_tokens);
    r->max_tokens_given = true;
  } else {
    // Chat fills the context; legacy completions default to 16 (OpenAI's documented default).
    p.max_tokens = endpoint == Endpoint::kChat ? std::numeric_limits<int32_t>::max() : 16;
    // generation_config.json's max_new_tokens caps that default, as in vLLM (which takes the
    // smallest of the defaults and what the context leaves).
    if (defaults.max_new_tokens) p.max_tokens = std::min(p.max_tokens, *defaults.max_new_tokens);
    if (limits.max_tokens_limit > 0) p.max_tokens = std::min(p.max_tokens, limits.max_tokens_limit);
  }
  if (auto v = get_int(body, "min_tokens")) {
    if (*v < 0 || (r->max_tokens_given && *v > p.max_tokens)) {
      reject("min_tokens", "'min_tokens' must be between 0 and max_tokens (" +
                               std::to_string(p.max_tokens) + "), got " + std::to_string(*v));
    }
    p.min_tokens = static_cast<int32_t>(*v);
  }
  if (auto v = get_bool(body, "ignore_eos")) p.ignore_eos = *v;
  if (auto v = get_bool(body, "skip_special_tokens")) p.skip_special_tokens = *v;
  parse_stop(body, limits, &p);
  parse_logit_bias(body, limits, &p);

  std::string lp_range = "between 0 and " + std::to_string(limits.max_logprobs);
  if (endpoint == Endpoint::kChat) {
    bool logprobs = get_bool(body, "logprobs").value_or(false);
    std::optional<int64_t> top = get_int(body, "top_logprobs");
    if (top && (*top < 0 || *top > limits.max_logprobs)) {
      reject("top_logprobs",
             "'top_logprobs' must be " + lp_range + ", got " + std::to_string(*top));
    }
    if (top && !logprobs) reject("top_logprobs", "'top_logprobs' requires 'logprobs': true");
    r->want_logprobs = logprobs;
    p.logprobs = logprobs ? static_cast<int32_t>(top.value_or(0)) : -1;
  } else if (auto v = get_int(body, "logprobs")) {
    if (*v < 0 || *v > limits.max_logprobs) {
      reject("logprobs", "'logprobs' must be " + lp_range + ", got " + std::to_string(*v));
    }
    r->want_logprobs = true;
    p.logprobs = static_cast<int32_t>(*v);
  }
  // vLLM's prompt_logprobs: each prompt token's logprob and that many best alternatives.
  if (auto v = get_int(body, "prompt_logprobs")) {
    if (*v < 0 || *v > limits.max_logprobs) {
      reject("prompt_logprobs",
             "'prompt_logprobs' must be " + lp_range + ", got " + std::to_string(*v));
    }
    r->want_prompt_logprobs = true;
    p.prompt_logprobs = static_cast<int32_t>(*v);
  }
  if (endpoint == Endpoint::kCompletion && get_bool(body, "echo").value_or(false)) {
    r->echo = true;
    // Echoed prompt tokens carry logprobs like the output's when logprobs is set.
    if (r->want_logprobs) p.prompt_logprobs = std::max(p.prompt_logprobs, p.logprobs);
  }
}

}  // namespace

std::variant<OpenAiRequest, ApiError> parse_openai_request(std::string_view body, Endpoint endpoint,
                                                           const RequestLimits& limits) {
  return guarded<OpenAiRequest>([&] {
    json j = parse_object(body);
    OpenAiRequest r;
    r.endpoint = endpoint;
    r.model = get_string(j, "model").value_or("");
    if (endpoint == Endpoint::kChat) {
      r.chat = parse_chat_prompt_request(j, body);
    } else {
      r.prompts = parse_prompts(j, limits);
    }
    parse_sampling(j, endpoint, limits, &r);
    parse_scheduling(j, limits, &r.scheduling);
    reject_unsupported(j, endpoint, r.params.n);
    if (endpoint == Endpoint::kChat) r.tools = parse_tool_request(j, body);
    r.constraint = parse_output_constraint(j, body);
    if (r.tools.active() && r.constraint.kind != OutputConstraint::Kind::kNone) {
      reject(r.constraint.param, "'" + r.constraint.param +
                                     "' cannot be combined with tools unless tool_choice is "
                                     "\"none\"");
    }
    r.stream = get_bool(j, "stream").value_or(false);
    if (const json* so = find(j, "stream_options")) {
      if (!r.stream) reject("stream_options", "'stream_options' is only allowed with stream: true");
      if (!so->is_object()) wrong_type("stream_options", "an object", *so);
      r.include_usage = get_bool(*so, "include_usage").value_or(false);
    }
    r.user = get_string(j, "user").value_or("");
    return r;
  });
}

std::optional<ApiError> fit_to_context(Endpoint endpoint, int32_t prompt_tokens,
                                       int32_t max_model_len, bool max_tokens_given,
                                       SamplingParams* params) {
  int64_t left = static_cast<int64_t>(max_model_len) - prompt_tokens;
  auto too_long = [&](const std::string& param, const std::string& detail) {
    ApiError e = invalid_param(param, "This model's maximum context length is " +
                                          std::to_string(max_model_len) + " tokens, " + detail);
    e.code = "context_length_exceeded";
    return e;
  };
  // Only a request that asks for no tokens (max_tokens 0: it scores its prompt) may fill the
  // whole context.
  if (left < (max_tokens_given && params->max_tokens == 0 ? 0 : 1)) {
    return too_long(endpoint == Endpoint::kChat ? "messages" : "prompt",
                    "but the prompt has " + std::to_string(prompt_tokens) +
                        " tokens, leaving no room to generate. Shorten the prompt.");
  }
  if (params->max_tokens > left) {
    if (max_tokens_given) {
      return too_long("max_tokens",
                      "but " +
                          std::to_string(static_cast<int64_t>(prompt_tokens) + params->max_tokens) +
                          " tokens were requested (" + std::to_string(prompt_tokens) +
                          " in the prompt + " + std::to_string(params->max_tokens) +
                          " max_tokens). Reduce the prompt or max_tokens.");
    }
    params->max_tokens = static_cast<int32_t>(left);
  }
  if (params->min_tokens > params->max_tokens) {
    return invalid_param("min_tokens", "'min_tokens' (" + std::to_string(params->min_tokens) +
                                           ") exceeds the " + std::to_string(params->max_tokens) +
                                           " tokens the context leaves");
  }
  return std::nullopt;
}

std::variant<TokenizeRequest, ApiError> parse_tokenize_request(std::string_view body) {
  return guarded<TokenizeRequest>([&] {
    json j = parse_object(body);
    TokenizeRequest r;
    r.model = get_string(j, "model").value_or("");
    if (find(j, "messages")) {
      r.is_chat = true;
      r.chat = parse_chat_prompt_request(j, body);
    } else {
      auto prompt = get_string(j, "prompt");
      if (!prompt) reject("prompt", "'prompt' (a string) or 'messages' is required");
      r.prompt = *prompt;
    }
    return r;
  });
}

std::variant<DetokenizeRequest, ApiError> parse_detokenize_request(std::string_view body,
                                                                   int32_t vocab_size) {
  return guarded<DetokenizeRequest>([&] {
    json j = parse_object(body);
    DetokenizeRequest r;
    r.model = get_string(j, "model").value_or("");
    const json* tokens = find(j, "tokens");
    if (!tokens) reject("tokens", "'tokens' is required");
    if (!tokens->is_array()) wrong_type("tokens", "an array of token ids", *tokens);
    for (const json& t : *tokens) r.tokens.push_back(token_id(t, "tokens", vocab_size));
    return r;
  });
}

}  // namespace ps
